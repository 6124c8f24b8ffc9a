import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The files of src/ whose name ends with `suffix`, relative to src/. */
function sourceFiles(suffix: string): string[] {
  const src = join(__dirname, '..', 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith(suffix));
}

const src = (file: string) => join(__dirname, '..', 'src', file);

/**
 * The rule for limits (docs/architecture.md, "Limits"): a fixed limit lives in its feature's
 * `<feature>.limits.ts`, a limit a deployment tunes is a setting. So an errors file declares errors,
 * nothing else, and a limits file declares numbers, nothing else.
 */
describe('Where limits live', () => {
  it.each(sourceFiles('.errors.ts'))('%s exports errors only', async (file) => {
    const exported = Object.entries(await import(src(file)));
    expect(exported.length).toBeGreaterThan(0);
    for (const [name, value] of exported) {
      const isError = typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error;
      expect({ name, isError }).toEqual({ name, isError: true });
    }
  });

  it.each(sourceFiles('.limits.ts'))('%s exports numbers only', async (file) => {
    const exported = Object.entries(await import(src(file)));
    expect(exported.length).toBeGreaterThan(0);
    for (const [name, value] of exported) {
      expect({ name, type: typeof value }).toEqual({ name, type: expect.stringMatching(/^(number|bigint)$/) });
    }
  });
});
