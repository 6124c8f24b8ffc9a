import { getMetadataStorage } from 'class-validator';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createValidationPipe } from './validation.pipe';

/** Every DTO of the service: the files of its `dto/` folders. */
async function loadDtos(): Promise<void> {
  const src = join(__dirname, '..', '..');
  for (const entry of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (/(^|\/)dto\/[^/]+\.dto\.ts$/.test(entry)) await import(join(src, entry));
  }
}

describe(createValidationPipe.name, () => {
  it('validates synchronously, which only holds while no rule of any DTO is asynchronous', async () => {
    await loadDtos();
    const storage = getMetadataStorage() as unknown as {
      validationMetadatas: Map<unknown, { constraintCls?: unknown; async?: boolean }[]>;
      constraintMetadatas: Map<unknown, { async: boolean }[]>;
    };
    const rules = [...storage.validationMetadatas.values()].flat();
    expect(rules.length).toBeGreaterThan(5);
    const constraints = [...storage.constraintMetadatas.values()].flat();
    expect(constraints.length).toBeGreaterThan(0);
    expect(constraints.filter((constraint) => constraint.async)).toEqual([]);
  });

  it("hands a custom decorator's value back as it is", async () => {
    const principal = { subject: 'someone' };
    await expect(createValidationPipe().transform(principal, { type: 'custom', metatype: Object })).resolves.toBe(
      principal,
    );
  });
});
