import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES, SETTINGS } from './configuration';
import {
  CONFIGURATION_DOC,
  ENV_EXAMPLE,
  envExample,
  settingsTable,
  settingsTableOf,
  withSettingsTable,
} from './settings-docs';
import { integer, text } from './settings';

const read = (file: string): string => readFileSync(join(__dirname, '..', '..', file), 'utf8');
const STALE = 'is not what the settings declare: run `npm run config:docs`';

describe('the settings documentation', () => {
  it(`${CONFIGURATION_DOC}'s settings table is the one the declarations produce`, () => {
    const doc = read(CONFIGURATION_DOC);
    expect(settingsTableOf(doc)).not.toBe('');
    if (doc !== withSettingsTable(doc, SETTINGS)) throw new Error(`${CONFIGURATION_DOC} ${STALE}`);
  });

  it(`${ENV_EXAMPLE} is the one the declarations produce`, () => {
    if (read(ENV_EXAMPLE) !== envExample(SETTINGS)) throw new Error(`${ENV_EXAMPLE} ${STALE}`);
  });

  it('gives every variable a row, in declaration order', () => {
    const names = [...settingsTable(SETTINGS).matchAll(/^\| `(\w+)`/gm)].map((match) => match[1]);
    expect(names).toEqual(CONFIG_VARIABLES);
  });

  const sample = {
    PORT: integer({ min: 0, max: 65535, default: 3000, description: 'HTTP port.' }),
    HOST: text({ defaultText: 'all interfaces', example: '127.0.0.1', description: 'Address, e.g. `a|b`.' }),
    SQLITE_PATH: text({ description: 'The file.', note: 'created with its folder' }),
  };

  it('writes a row per variable with its default, or what stands for it, aligned in columns', () => {
    expect(settingsTable(sample)).toBe(
      [
        '| variable      | default        | meaning               |',
        '| ------------- | -------------- | --------------------- |',
        '| `PORT`        | `3000`         | HTTP port.            |',
        '| `HOST`        | all interfaces | Address, e.g. `a\\|b`. |',
        '| `SQLITE_PATH` | unset          | The file.             |',
      ].join('\n'),
    );
  });

  it('writes .env.example with each example, or default, and its note', () => {
    expect(envExample(sample).split('\n').slice(2, 6)).toEqual([
      '# PORT=3000',
      '# HOST=127.0.0.1',
      '# SQLITE_PATH=',
      '#   created with its folder',
    ]);
  });

  it('replaces only what lies between the markers, and refuses a document without them', () => {
    const doc = read(CONFIGURATION_DOC);
    const rewritten = withSettingsTable(doc, sample);
    expect(settingsTableOf(rewritten)).toBe(settingsTable(sample));
    expect(withSettingsTable(rewritten, SETTINGS)).toBe(withSettingsTable(doc, SETTINGS));
    expect(() => withSettingsTable('# Configuration\n', SETTINGS)).toThrow(/markers/);
  });
});
