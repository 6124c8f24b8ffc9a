import { readdirSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { getMetadataArgsStorage } from 'typeorm';

/** A file that declares tables: `<name>.entity.ts` (`.js` in `dist/`), as Nest's projects name them. */
const ENTITY_FILE = /\.entity\.[cm]?[jt]s$/;

export class InvalidEntityFile extends Error {
  constructor(file: string, problem: string) {
    super(`${file} ${problem}`);
    this.name = InvalidEntityFile.name;
  }
}

/**
 * The entities declared under `root` (src/ or dist/): every `@Entity` class exported by a file named
 * `*.entity` in any folder, found rather than listed, so that a new table is its entity's file and
 * its migration. The modules are read with the extension of this one: `.ts` from the sources
 * (ts-node, jest), `.js` from `dist/`. A file so named that exports no entity stops the load, naming
 * it: a table the schema check and readiness would otherwise not know of.
 */
export function entitiesIn(root: string, extension = extname(__filename)): (new () => unknown)[] {
  const entities: (new () => unknown)[] = [];
  for (const file of entityFiles(root, extension)) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module found at run time
    const exported = Object.values(require(file) as Record<string, unknown>);
    // Read after the require: a module registers its entities with TypeORM as it loads.
    const declared = new Set(getMetadataArgsStorage().tables.map((table) => table.target));
    const found = exported.filter((value): value is new () => unknown => declared.has(value as never));
    if (found.length === 0)
      throw new InvalidEntityFile(relative(root, file), 'is named *.entity but exports no @Entity class');
    entities.push(...found);
  }
  return entities;
}

function entityFiles(folder: string, extension: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : entityFiles(path, extension);
      return entry.isFile() && entry.name.endsWith(extension) && ENTITY_FILE.test(entry.name) ? [path] : [];
    });
}
