import { parser } from '@prometheus-io/lezer-promql';
import { request as httpRequest } from 'node:http';
import { MetricsService } from '../src/metrics/metrics.service';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import {
  DASHBOARD,
  OPERATIONS_DOC,
  dashboardPanels,
  dashboardVariables,
  read,
  rules,
  runbookAnchor,
} from '../scripts/docs/monitoring';

/**
 * The monitoring that ships in deploy/observability, held to the service: every series a dashboard
 * panel or an alert rule names is one a running instance exports, with the labels it matches on.
 * The queries are read from the dashboard's JSON and the rules file themselves, and so are the
 * tables of docs/operations.md that describe them.
 */

/** Series Prometheus makes itself for each target, and the labels it gives every series. */
const PROMETHEUS_SERIES = ['up'];
const TARGET_LABELS = ['job', 'instance'];
/**
 * The MySQL pool's gauges, and the Galera node's (declared on MySQL, with samples on a Galera node),
 * exist only on MySQL: without TEST_DATABASE_URL they are not checked (CI sets it).
 */
const MYSQL_ONLY = /^db_(pool|galera)_/;

interface Query {
  /** Where it is written: a panel's title and query, or a rule's name. */
  where: string;
  expr: string;
}

function queries(): Query[] {
  return [
    ...dashboardPanels().flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr })),
    ),
    ...rules().map((rule) => ({ where: `rule ${rule.alert ?? rule.record}`, expr: rule.expr })),
    // A variable's values: label_values(series, label) reads the series.
    ...dashboardVariables().flatMap((variable) => {
      const series = /^label_values\((.+),\s*\w+\)$/.exec(variable.definition ?? '')?.[1];
      return series ? [{ where: `variable ${variable.name}`, expr: series }] : [];
    }),
  ];
}

/** Grafana's variables replaced by what they stand for, so the query is PromQL. */
const promql = (expr: string) =>
  expr.replace(/\$__(rate_interval|interval|range)\b/g, '5m').replace(/\$\{?\w+\}?/g, '.*');

interface Selector {
  metric: string;
  labels: string[];
}

/** The series a query selects, and the labels each is matched on; throws where it does not parse. */
function selectors(expr: string): Selector[] {
  const text = promql(expr);
  const found: Selector[] = [];
  const cursor = parser.parse(text).cursor();
  do {
    if (cursor.type.isError) throw new Error(`does not parse at ${cursor.from}: ${text}`);
    if (cursor.name !== 'VectorSelector') continue;
    const node = cursor.node;
    const metric = node.getChild('Identifier');
    if (!metric) throw new Error(`a selector without a metric name: ${text.slice(node.from, node.to)}`);
    const labels = (node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []).map((matcher) => {
      const name = matcher.getChild('LabelName')!;
      return text.slice(name.from, name.to);
    });
    found.push({ metric: text.slice(metric.from, metric.to), labels });
  } while (cursor.next());
  return found;
}

/** The series names a scrape exports (a histogram's _bucket, _sum and _count), with their samples' label names. */
function exported(text: string): Map<string, Set<string>> {
  const series = new Map<string, Set<string>>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const names =
      type === 'histogram'
        ? [`${name}_bucket`, `${name}_sum`, `${name}_count`]
        : type === 'summary'
          ? [name, `${name}_sum`, `${name}_count`]
          : [name];
    for (const each of names) series.set(each, new Set());
  }
  for (const [, name, labels] of text.matchAll(/^([a-zA-Z_:][\w:]*)\{(.*)\} \S+$/gm)) {
    for (const [, label] of labels.matchAll(/(?:^|,)([a-zA-Z_]\w*)="(?:[^"\\]|\\.)*"/g)) series.get(name)?.add(label);
  }
  return series;
}

function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the dashboard and the alert rules', () => {
  it('have queries, every one of them PromQL that parses', () => {
    const all = queries();
    expect(all.filter((query) => query.where.startsWith('panel')).length).toBeGreaterThan(20);
    expect(all.filter((query) => query.where.startsWith('rule')).length).toBeGreaterThan(10);
    const failures = all.flatMap(({ where, expr }) => {
      try {
        return selectors(expr).length > 0 ? [] : [`${where}: selects no series`];
      } catch (error) {
        return [`${where}: ${(error as Error).message}`];
      }
    });
    expect(failures).toEqual([]);
  });

  it('give every panel a title and a description, and the dashboard one Prometheus variable to query', () => {
    const panels = dashboardPanels().filter((panel) => panel.type !== 'row');
    expect(panels.filter((panel) => !panel.title || !panel.description).map((panel) => panel.title)).toEqual([]);
    expect(dashboardVariables()).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource' }));
    expect(read(DASHBOARD)).not.toMatch(/"uid": "(?!\$\{datasource\}|-- Grafana --|plant-store")/);
  });
});

describe('the series they name', () => {
  /** What each database's instance exports. */
  const scrapes = new Map<string, Map<string, Set<string>>>();

  beforeAll(async () => {
    for (const database of testDatabases()) {
      const t: TestApp = await startTestApp(database, { METRICS_PORT: '0' });
      try {
        await t.reset();
        const token = await t.token({ subject: 'monitoring' });
        // Requests, so that the labelled series have samples whose labels can be checked.
        await t.http().get('/plants').set(bearer(token)).expect(200);
        await t.http().get('/no/such/path').expect(404);
        scrapes.set(database, exported(await scrape(t.app.get(MetricsService).port as number)));
      } finally {
        await t.close();
      }
    }
  });

  it('are exported by a running instance (on MySQL, those of MySQL too), with the labels matched on', () => {
    const recorded = rules().flatMap((rule) => (rule.record ? [rule.record] : []));
    const problems = new Set<string>();
    for (const { where, expr } of queries()) {
      for (const { metric, labels } of selectors(expr)) {
        if (recorded.includes(metric) || PROMETHEUS_SERIES.includes(metric)) continue;
        const seen = [...scrapes.values()].map((series) => series.get(metric)).filter((labelled) => labelled);
        if (seen.length === 0) {
          if (!(MYSQL_ONLY.test(metric) && !scrapes.has('mysql'))) problems.add(`${where}: ${metric} is not exported`);
          continue;
        }
        const known = new Set(seen.flatMap((labelled) => [...labelled!]));
        // A series without samples yet (a counter of events that have not happened) says nothing of its labels.
        if (known.size === 0) continue;
        for (const label of labels.filter((name) => !TARGET_LABELS.includes(name) && !known.has(name)))
          problems.add(`${where}: ${metric} has no label ${label}`);
      }
    }
    expect([...problems]).toEqual([]);
  });
});

describe(OPERATIONS_DOC, () => {
  const doc = read(OPERATIONS_DOC);
  /** GitHub's anchor of each heading. */
  const anchors = [...doc.matchAll(/^#+ (.+)$/gm)].map(([, heading]) =>
    heading
      .toLowerCase()
      .replace(/[^\w\- ]/g, '')
      .replace(/ /g, '-'),
  );

  it('has a runbook section for every alert, where its runbook_url points', () => {
    const alerts = rules().filter((rule) => rule.alert);
    for (const rule of alerts) {
      expect(rule.annotations?.runbook_url).toBe(`${OPERATIONS_DOC}#${runbookAnchor(rule)}`);
      expect(anchors).toContain(runbookAnchor(rule));
    }
    // A runbook section of its own for each alert but a slower twin, which shares its faster one's.
    const sections = [...doc.matchAll(/^#### (PlantStore\w+)$/gm)].map(([, name]) => name);
    expect(sections.sort()).toEqual(
      [
        ...new Set(alerts.map((rule) => alerts.find((other) => runbookAnchor(other) === runbookAnchor(rule))!.alert!)),
      ].sort(),
    );
  });
});
