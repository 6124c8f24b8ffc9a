import { Setting, SettingsTable } from '../../src/config/settings';
import { markdownTable } from './fragments';

/** docs/configuration.md's settings table and .env.example, both written from the settings' declarations. */

export const ENV_EXAMPLE = '.env.example';

export function settingsTable(settings: SettingsTable): string {
  return markdownTable(
    ['variable', 'default', 'meaning'],
    Object.entries(settings).map(([name, setting]) => [`\`${name}\``, defaultColumn(setting), setting.doc.description]),
  );
}

function defaultColumn(setting: Setting<unknown>): string {
  return setting.doc.defaultText ?? (setting.default === undefined ? 'unset' : `\`${setting.default}\``);
}

export function envExample(settings: SettingsTable): string {
  const lines = [
    '# Copy to .env to configure a local run; every variable is optional. Written by `npm run docs`',
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
