import { CONFIG_VARIABLES, SETTINGS } from '../../src/config/configuration';
import { integer, text } from '../../src/config/settings';
import { envExample, settingsTable } from './settings';

describe('the settings documentation', () => {
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
});
