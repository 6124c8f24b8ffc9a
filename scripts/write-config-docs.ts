import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS } from '../src/config/configuration';
import { CONFIGURATION_DOC, ENV_EXAMPLE, envExample, withSettingsTable } from '../src/config/settings-docs';

/** Rewrites docs/configuration.md's settings table and .env.example from the settings' declarations (`npm run config:docs`). */
function main(): void {
  const root = join(__dirname, '..');
  const doc = join(root, CONFIGURATION_DOC);
  writeFileSync(doc, withSettingsTable(readFileSync(doc, 'utf8'), SETTINGS));
  writeFileSync(join(root, ENV_EXAMPLE), envExample(SETTINGS));
  process.stdout.write(`Wrote ${CONFIGURATION_DOC} and ${ENV_EXAMPLE}\n`);
}

main();
