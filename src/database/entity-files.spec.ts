import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getMetadataArgsStorage } from 'typeorm';
import { ENTITIES } from './data-source';
import { InvalidEntityFile, entitiesIn } from './entity-files';

/** A compiled module (as `dist/` holds one) exporting a class, registered as TypeORM's @Entity registers one when `entity`. */
function moduleText(name: string, entity: boolean): string {
  const register = entity
    ? `require(${JSON.stringify(require.resolve('typeorm'))}).getMetadataArgsStorage().tables.push({ target: ${name}, name: '${name.toLowerCase()}', type: 'regular' });`
    : '';
  return `class ${name} {}\n${register}\nexports.${name} = ${name};`;
}

describe(entitiesIn.name, () => {
  let root: string;
  let count = 0;
  const tables = getMetadataArgsStorage().tables;
  const registered = tables.length;

  beforeEach(() => {
    // A folder per test: a module once required stays in the module registry under its path.
    root = mkdtempSync(join(tmpdir(), `entity-files-${(count += 1)}-`));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    tables.splice(registered);
  });

  const write = (files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
  };

  it("finds the entities of every folder's *.entity files, and nothing else", () => {
    write({
      'plants/plant.entity.js': moduleText('Plant', true),
      'webhooks/deliveries/delivery.entity.js': moduleText('Delivery', true),
      'webhooks/deliveries/delivery.entity.spec.js': 'throw new Error("a spec is never loaded")',
      'webhooks/deliveries/delivery.js': 'throw new Error("not an entity file")',
      'plants/plant.entity.js.map': '{}',
    });
    expect(entitiesIn(root, '.js').map((entity) => entity.name)).toEqual(['Plant', 'Delivery']);
  });

  it('stops at an entity file that declares no entity, naming it', () => {
    write({ 'plants/plant.entity.js': moduleText('Plant', false) });
    expect(() => entitiesIn(root, '.js')).toThrow(
      new InvalidEntityFile('plants/plant.entity.js', 'is named *.entity but exports no @Entity class'),
    );
  });

  it("is every entity of the service's sources", () => {
    const files = (folder: string): string[] =>
      readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(folder, entry.name)) : entry.name.endsWith('.entity.ts') ? [entry.name] : [],
      );
    expect(ENTITIES.length).toBeGreaterThanOrEqual(files(join(__dirname, '..')).length);
    expect(ENTITIES.map((entity) => entity.name)).toEqual(
      expect.arrayContaining(['Plant', 'ApiToken', 'WebhookSubscription']),
    );
  });
});
