import { readdirSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import type { MigrationInterface } from 'typeorm';

export type MigrationClass = new () => MigrationInterface;

/** How `migration:generate` and `migration:create` name a migration's file: `<timestamp>-<Name>`. */
const MIGRATION_FILE = /^(\d{13})-([A-Za-z][A-Za-z0-9]*)$/;
/** Files beside the modules that are none of them: specs, declarations, source maps. */
const NOT_A_MODULE = /\.(spec|test)\.[cm]?[jt]s$|\.d\.[cm]?ts$/;

export class InvalidMigrationFile extends Error {
  constructor(folder: string, file: string, problem: string) {
    super(`${join(folder, file)} ${problem}`);
    this.name = InvalidMigrationFile.name;
  }
}

/**
 * The migrations of `folder` (its own files, not a sub-folder's), in timestamp order: found rather
 * than listed, so that a migration is the one file `migration:generate` writes. Each is a file
 * `<timestamp>-<Name>` exporting its class `<Name><timestamp>` (the name TypeORM records it under
 * and takes its timestamp from) with `up` and `down`. The modules are read with the extension of
 * this one: `.ts` from the sources (ts-node, jest), `.js` from `dist/`, where the source maps beside
 * them are no modules.
 *
 * A file that looks like a migration and is none stops the load, naming the file, rather than
 * leaving a schema change out: a name that is not `<timestamp>-<Name>` on a module that exports a
 * migration, a migration module without its class or with another one, two migrations of one
 * timestamp. A module of neither kind is a helper of the migrations (online-ddl.ts).
 */
export function migrationsIn(folder: string, extension = extname(__filename)): MigrationClass[] {
  const found: { timestamp: number; migration: MigrationClass }[] = [];
  const files = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension) && !NOT_A_MODULE.test(entry.name))
    .map((entry) => entry.name)
    .sort();
  for (const file of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module found at run time
    const exported = require(resolve(folder, file)) as Record<string, unknown>;
    const migrations = Object.entries(exported).filter(([, value]) => isMigrationClass(value));
    const named = MIGRATION_FILE.exec(file.slice(0, -extension.length));
    if (!named) {
      if (migrations.length > 0) {
        throw new InvalidMigrationFile(folder, file, 'exports a migration but is not named <timestamp>-<Name>');
      }
      continue;
    }
    const [, timestamp, name] = named;
    const expected = `${name}${timestamp}`;
    const others = migrations.map(([key]) => key).filter((key) => key !== expected);
    if (!migrations.some(([key]) => key === expected) || others.length > 0) {
      throw new InvalidMigrationFile(
        folder,
        file,
        `must export one migration, the class ${expected} with up and down` +
          (others.length > 0 ? `; it exports ${others.join(', ')}` : ''),
      );
    }
    const twin = found.find((migration) => migration.timestamp === Number(timestamp));
    if (twin) {
      throw new InvalidMigrationFile(
        folder,
        file,
        `has the timestamp of ${twin.migration.name}: their order is unknown`,
      );
    }
    found.push({ timestamp: Number(timestamp), migration: exported[expected] as MigrationClass });
  }
  return found.sort((a, b) => a.timestamp - b.timestamp).map(({ migration }) => migration);
}

function isMigrationClass(value: unknown): value is MigrationClass {
  const prototype = (value as { prototype?: Partial<MigrationInterface> } | undefined)?.prototype;
  return typeof value === 'function' && typeof prototype?.up === 'function' && typeof prototype?.down === 'function';
}
