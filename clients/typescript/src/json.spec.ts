import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertInt64, parseJson, writeJson } from './json';

describe('exact JSON', () => {
  it('reads every id as an exact bigint, also beyond 2^53, and other numbers as numbers', () => {
    const text =
      '[{"id":9223372036854775807,"name":"a"},{"id":-9223372036854775808},{"id":9007199254740993,"attempt":2}]';
    expect(parseJson(text)).toEqual([
      { id: 9223372036854775807n, name: 'a' },
      { id: -9223372036854775808n },
      { id: 9007199254740993n, attempt: 2 },
    ]);
    // What JSON.parse would have made of the last one.
    expect(BigInt(JSON.parse('9007199254740993'))).toBe(9007199254740992n);
  });

  it.each(['{"id":1.5}', '{"id":1e3}', '{"id":9223372036854775808}', '{"id":'])('refuses %s', (text) => {
    expect(() => parseJson(text)).toThrow();
  });

  it('writes bigints as bare integers, digit for digit', () => {
    expect(writeJson({ id: 9223372036854775807n, name: 'x', tag: undefined })).toBe(
      '{"id":9223372036854775807,"name":"x"}',
    );
  });

  it('takes only int64 bigints as ids', () => {
    expect(() => assertInt64('id', 7)).toThrow(TypeError);
    expect(() => assertInt64('id', 2n ** 63n)).toThrow(RangeError);
    expect(() => assertInt64('id', -(2n ** 63n) - 1n)).toThrow(RangeError);
    expect(() => assertInt64('id', -(2n ** 63n))).not.toThrow();
  });

  // parseJson turns exactly the properties named `id` into bigints: that must stay what the API's
  // int64 properties are, or a new one would be read through a double.
  // An id that is a string (an event's `evt_<n>`) is read as the string it is: only numbers round.
  it('matches openapi.json: every int64 property is named id, and every id is an int64 or a string', () => {
    const document = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8'));
    const int64: string[] = [];
    const ids: string[] = [];
    const walk = (node: unknown, key: string, path: string) => {
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (schema.format === 'int64' && path.includes('/properties/')) int64.push(key);
      for (const [name, child] of Object.entries(schema)) {
        if (path.endsWith('/properties') && name === 'id') ids.push(`${path}/id`);
        walk(child, name, `${path}/${name}`);
      }
    };
    walk(document.components.schemas, '', '#/components/schemas');
    expect(int64.length).toBeGreaterThan(0);
    expect(new Set(int64)).toEqual(new Set(['id']));
    for (const path of ids) {
      const schema = path
        .slice(2)
        .split('/')
        .reduce((node: Record<string, unknown>, name) => node[name] as Record<string, unknown>, document);
      const kind = schema.type === 'string' ? 'string' : schema.format;
      expect({ path, kind }).toEqual({
        path,
        kind: path.startsWith('#/components/schemas/Event/') ? 'string' : 'int64',
      });
    }
  });
});
