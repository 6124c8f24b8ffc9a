import { Setting, SettingsTable } from './settings';

/**
 * docs/configuration.md's settings table and .env.example, both written from the settings'
 * declarations (`npm run config:docs`); a spec fails when the committed files differ.
 */

export const CONFIGURATION_DOC = 'docs/configuration.md';
export const ENV_EXAMPLE = '.env.example';

const TABLE_START = '<!-- settings table: written by `npm run config:docs` from src/config/env/; edit there -->';
const TABLE_END = '<!-- end of settings table -->';

/** A markdown table with its columns aligned the way Prettier aligns them. */
export function markdownTable(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replace(/\|/g, '\\|')));
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => row[column].length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

export function settingsTable(settings: SettingsTable): string {
  return markdownTable(
    ['variable', 'default', 'meaning'],
    Object.entries(settings).map(([name, setting]) => [`\`${name}\``, defaultColumn(setting), setting.doc.description]),
  );
}

function defaultColumn(setting: Setting<unknown>): string {
  return setting.doc.defaultText ?? (setting.default === undefined ? 'unset' : `\`${setting.default}\``);
}

/** The document with the table between its markers replaced; it must hold the markers once. */
export function withSettingsTable(document: string, settings: SettingsTable): string {
  const start = document.indexOf(TABLE_START);
  const end = document.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${CONFIGURATION_DOC} lacks the settings table's markers`);
  return `${document.slice(0, start + TABLE_START.length)}\n\n${settingsTable(settings)}\n\n${document.slice(end)}`;
}

/** The table alone, as found between the markers. */
export function settingsTableOf(document: string): string {
  const start = document.indexOf(TABLE_START);
  const end = document.indexOf(TABLE_END);
  return start < 0 || end < start ? '' : document.slice(start + TABLE_START.length, end).trim();
}

export function envExample(settings: SettingsTable): string {
  const lines = [
    '# Copy to .env to configure a local run; every variable is optional. Written by `npm run config:docs`',
    '# from src/config/env/; docs/configuration.md says what each one does.',
  ];
  for (const [name, setting] of Object.entries(settings)) {
    lines.push(`# ${name}=${setting.doc.example ?? setting.default ?? ''}`);
    if (setting.doc.note) lines.push(`#   ${setting.doc.note}`);
  }
  lines.push(
    "# Traces: OpenTelemetry's OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT switches tracing on) are",
    '#   read from the process environment only, never from this file: docs/configuration.md, "Traces".',
  );
  return `${lines.join('\n')}\n`;
}
