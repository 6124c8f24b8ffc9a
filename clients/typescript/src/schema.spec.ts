import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { answersText, kindOf } from '../scripts/answers';
import { int64AsBigint } from '../scripts/int64-as-bigint';

const GENERATE = join(__dirname, '..', 'scripts', 'generate.ts');
const SCHEMA = join(__dirname, 'schema.ts');
const ANSWERS = join(__dirname, 'answers.ts');

describe('src/schema.ts', () => {
  // In a process of its own: openapi-typescript loads ES modules that Node requires and Jest cannot.
  it('is what openapi.json generates (run `npm run generate -w clients/typescript` after `npm run openapi`)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--require', require.resolve('ts-node/register/transpile-only'), GENERATE, '--stdout'],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    expect(stdout).toBe(readFileSync(SCHEMA, 'utf8'));
  }, 60_000);

  it('types every int64 as bigint, nullable or not, and leaves other formats alone', () => {
    const print = (node: ts.TypeNode | undefined) =>
      node && ts.createPrinter().printNode(ts.EmitHint.Unspecified, node, ts.createSourceFile('x.ts', '', 99));
    expect(print(int64AsBigint({ format: 'int64' }))).toBe('bigint');
    expect(print(int64AsBigint({ format: 'int64', nullable: true }))).toBe('bigint | null');
    expect(int64AsBigint({ format: 'int32' })).toBeUndefined();
    expect(int64AsBigint({})).toBeUndefined();
  });
});

describe('src/answers.ts', () => {
  it('is what openapi.json generates (run `npm run generate -w clients/typescript` after `npm run openapi`)', () => {
    expect(answersText()).toBe(readFileSync(ANSWERS, 'utf8'));
  });

  it('names the JSON type of each property as the client checks it', () => {
    expect(kindOf({ type: 'integer', format: 'int64' }, 'x')).toBe('int64');
    expect(kindOf({ type: 'integer', format: 'int32' }, 'x')).toBe('number');
    expect(kindOf({ type: 'string', format: 'date-time' }, 'x')).toBe('string');
    expect(kindOf({ type: 'array', items: { type: 'string' } }, 'x')).toBe('string[]');
    expect(kindOf({ anyOf: [{ $ref: '#/components/schemas/A' }] }, 'x')).toBe('object');
  });

  it('refuses a property the client cannot check, naming it', () => {
    expect(() => kindOf({ type: 'string', nullable: true }, 'Plant.tag')).toThrow(/^Plant\.tag may be null/);
    expect(() => kindOf({ type: 'array', items: { type: 'integer' } }, 'Plant.sizes')).toThrow(
      /^Plant\.sizes is of a type/,
    );
  });
});
