import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseDuration } from '../../src/config/duration';
import { Fact, Facts, markdownTable } from './fragments';
import { duration } from './readable';

/**
 * The monitoring that ships in deploy/observability as the docs state it: docs/operations.md's
 * tables of the dashboard's panels and of the alerts are facts (scripts/docs/facts.ts) read from
 * the dashboard's JSON and the rules file; test/monitoring.e2e-spec.ts reads the same files.
 */

const ROOT = join(__dirname, '..', '..');
export const OPERATIONS_DOC = 'docs/operations.md';
export const DASHBOARD = 'deploy/observability/grafana/dashboards/plant-store.json';
export const RULES = 'deploy/observability/prometheus/plant-store.rules.yml';

export const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

export interface DashboardPanel {
  title: string;
  description?: string;
  type: string;
  targets?: { expr: string; refId: string }[];
  panels?: DashboardPanel[];
}

/** Every panel, rows included, in the dashboard's order. */
export function dashboardPanels(): DashboardPanel[] {
  const { panels } = JSON.parse(read(DASHBOARD)) as { panels: DashboardPanel[] };
  return panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** The dashboard's variables: `definition` is the query of one whose values come from Prometheus. */
export function dashboardVariables(): { name: string; type: string; definition?: string }[] {
  return (
    JSON.parse(read(DASHBOARD)) as { templating: { list: { name: string; type: string; definition?: string }[] } }
  ).templating.list;
}

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function rules(): Rule[] {
  const { groups } = parse(read(RULES)) as { groups: { rules: Rule[] }[] };
  return groups.flatMap((group) => group.rules);
}

export function panelsTable(): string {
  let row = '';
  const rows: string[][] = [];
  for (const panel of dashboardPanels()) {
    if (panel.type === 'row') row = panel.title;
    else rows.push([row, panel.title, panel.description ?? '']);
  }
  return markdownTable(['row', 'panel', 'shows'], rows);
}

/** The anchor of a runbook section in OPERATIONS_DOC, as its rule's runbook_url names it. */
export const runbookAnchor = (rule: Rule): string => (rule.annotations?.runbook_url ?? '').split('#')[1] ?? '';

export function alertsTable(): string {
  return markdownTable(
    ['alert', 'severity', 'after', 'fires when'],
    rules()
      .filter((rule) => rule.alert)
      .map((rule) => [
        `[${rule.alert}](#${runbookAnchor(rule)})`,
        rule.labels?.severity ?? '',
        rule.for ?? 'at once',
        `\`${rule.expr.trim().replace(/\s+/g, ' ')}\``,
      ]),
  );
}

/**
 * What the runbook says of each alert's rule: `alert-for:NAME`, how long its condition lasts before
 * it fires, and `alert-threshold:NAME`, the age in seconds its expression compares with, if any.
 */
export function alertFacts(): Facts {
  return Object.fromEntries(
    rules().flatMap((rule): [string, Fact][] => {
      if (!rule.alert) return [];
      const threshold = /_seconds\) > (\d+)$/.exec(rule.expr.trim())?.[1];
      const lasting = rule.for === undefined ? undefined : parseDuration(rule.for);
      return [
        ...(lasting === undefined ? [] : [[`alert-for:${rule.alert}`, { text: duration(lasting) }] as [string, Fact]]),
        ...(threshold === undefined
          ? []
          : [[`alert-threshold:${rule.alert}`, { text: duration(Number(threshold) * 1000) }] as [string, Fact]]),
      ];
    }),
  );
}
