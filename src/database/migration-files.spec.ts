import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { MIGRATIONS, POST_DEPLOYMENT_MIGRATIONS } from './data-source';
import { InvalidMigrationFile, migrationsIn } from './migration-files';

/** A compiled migration module (as `dist/` holds one) exporting `classes`, each with up and down unless told. */
function moduleText(...classes: (string | { name: string; down: false })[]): string {
  return classes
    .map((spec) => {
      const { name, down } = typeof spec === 'string' ? { name: spec, down: true } : spec;
      const methods = `async up() {}${down ? ' async down() {}' : ''}`;
      return `exports.${name} = class ${name} { ${methods} };`;
    })
    .join('\n');
}

describe(migrationsIn.name, () => {
  let folder: string;
  let count = 0;

  beforeEach(() => {
    // A folder per test: a module once required stays in the module registry under its path.
    folder = mkdtempSync(join(tmpdir(), `migration-files-${(count += 1)}-`));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const write = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  };

  it('finds the migrations of the folder in timestamp order, with their helpers, specs, maps and declarations left out', () => {
    write({
      '1700000000002-AddTag.js': moduleText('AddTag1700000000002'),
      '1700000000001-Initial.js': moduleText('Initial1700000000001'),
      '1700000000001-Initial.js.map': '{}',
      '1700000000001-Initial.d.ts': 'export declare class Initial1700000000001 {}',
      'online-ddl.js': 'exports.online = () => "ALGORITHM=INPLACE";',
      'online-ddl.spec.js': 'describe("never loaded", () => {});',
      'README.md': 'Not a module',
    });
    expect(migrationsIn(folder, '.js').map((migration) => migration.name)).toEqual([
      'Initial1700000000001',
      'AddTag1700000000002',
    ]);
  });

  it('finds them in a folder named relative to the working directory', () => {
    write({ '1700000000001-Initial.js': moduleText('Initial1700000000001') });
    expect(migrationsIn(relative(process.cwd(), folder), '.js').map((migration) => migration.name)).toEqual([
      'Initial1700000000001',
    ]);
  });

  it('reads only the modules of the extension it runs with', () => {
    write({ '1700000000001-Initial.ts': 'this is not JavaScript' });
    expect(migrationsIn(folder, '.js')).toEqual([]);
  });

  it.each([
    [
      'a migration whose file is not named <timestamp>-<Name>',
      { 'AddTag.js': moduleText('AddTag1700000000002') },
      /AddTag\.js exports a migration but is not named <timestamp>-<Name>/,
    ],
    [
      'a file named as a migration that exports none',
      { '1700000000002-AddTag.js': 'exports.tag = "x";' },
      /1700000000002-AddTag\.js must export one migration, the class AddTag1700000000002 with up and down$/,
    ],
    [
      'a class named for another timestamp',
      { '1700000000002-AddTag.js': moduleText('AddTag1700000000003') },
      /must export one migration, the class AddTag1700000000002 with up and down; it exports AddTag1700000000003/,
    ],
    [
      'a class without down',
      { '1700000000002-AddTag.js': moduleText({ name: 'AddTag1700000000002', down: false }) },
      /1700000000002-AddTag\.js must export one migration, the class AddTag1700000000002/,
    ],
    [
      'two migrations in one file',
      { '1700000000002-AddTag.js': moduleText('AddTag1700000000002', 'AddColor1700000000004') },
      /it exports AddColor1700000000004/,
    ],
    [
      'two migrations of one timestamp',
      {
        '1700000000002-AddTag.js': moduleText('AddTag1700000000002'),
        '1700000000002-AddColor.js': moduleText('AddColor1700000000002'),
      },
      /1700000000002-AddTag\.js has the timestamp of AddColor1700000000002: their order is unknown/,
    ],
  ])('stops at %s, naming the file', (_case, files, message) => {
    write(files);
    let thrown: unknown;
    try {
      migrationsIn(folder, '.js');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidMigrationFile);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).toContain(folder);
  });
});

describe('the migrations of the service', () => {
  /** The `<timestamp>-<Name>` modules of a folder of src/database/, as class names in timestamp order. */
  const filesOf = (folder: string) =>
    readdirSync(join(__dirname, folder))
      .map((file) => /^(\d{13})-(\w+)\.ts$/.exec(file))
      .filter((match) => match !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]))
      .map(([, timestamp, name]) => `${name}${timestamp}`);

  it('are every migration file of their folders, in timestamp order', () => {
    expect(MIGRATIONS.map((migration) => migration.name)).toEqual(filesOf('migrations'));
    expect(POST_DEPLOYMENT_MIGRATIONS.map((migration) => migration.name)).toEqual(
      filesOf('migrations/post-deployment'),
    );
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    expect(POST_DEPLOYMENT_MIGRATIONS.length).toBeGreaterThan(0);
  });
});
