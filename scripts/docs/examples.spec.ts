import { ROOT } from './facts';
import { exampleOf, prettyJson, schemasOf } from './examples';

const schemas = {
  Thing: {
    properties: {
      id: { example: 7 },
      name: { example: 'Fern' },
      note: { example: 'a note' },
      hidden: {},
      part: { allOf: [{ $ref: '#/components/schemas/Part' }] },
    },
    required: ['id', 'name', 'part'],
  },
  Part: { properties: { size: { example: 3 } }, required: ['size'] },
  Bare: { properties: { id: {} }, required: ['id'] },
};

describe(exampleOf.name, () => {
  it("is every property with an example, another schema's as its example, in the schema's order", () => {
    const example = exampleOf(schemas, 'Thing');
    expect(example).toStrictEqual({ id: 7, name: 'Fern', note: 'a note', part: { size: 3 } });
    expect(Object.keys(example)).toEqual(['id', 'name', 'note', 'part']);
  });

  it('leaves out the optional properties asked, and takes the values given', () => {
    expect(exampleOf(schemas, 'Thing', { leaveOut: ['note'], values: { id: 2n ** 53n + 1n } })).toStrictEqual({
      id: 2n ** 53n + 1n,
      name: 'Fern',
      part: { size: 3 },
    });
  });

  it('refuses a required property without an example, one left out, and properties the schema has not', () => {
    expect(() => exampleOf(schemas, 'Bare')).toThrow("Bare.id declares no example, which the docs' examples need");
    expect(() => exampleOf(schemas, 'Thing', { leaveOut: ['name'] })).toThrow('Thing.name is required');
    expect(() => exampleOf(schemas, 'Thing', { values: { colour: 'green' } })).toThrow('Thing declares no colour');
    expect(() => exampleOf(schemas, 'Missing')).toThrow('openapi.json has no object schema Missing');
  });

  it('makes an example of each answer of the committed document that the docs show', () => {
    const committed = schemasOf(ROOT);
    expect(exampleOf(committed, 'Plant')).toMatchObject({ id: expect.any(Number), name: expect.any(String) });
  });
});

describe(prettyJson.name, () => {
  it('writes the outermost object a member per line, and what fits inside on one line, int64 exact', () => {
    expect(prettyJson({ id: 2n ** 63n - 1n, events: ['a', 'b'], data: { id: 1, tag: null } })).toBe(
      '{\n  "id": 9223372036854775807,\n  "events": ["a", "b"],\n  "data": { "id": 1, "tag": null }\n}',
    );
  });

  it('writes each object of an outermost array a member per line', () => {
    expect(prettyJson([{ id: 1 }, { id: 2 }])).toBe('[\n  {\n    "id": 1\n  },\n  {\n    "id": 2\n  }\n]');
  });

  it('breaks a member that would pass 120 characters, its comma included, as Prettier does', () => {
    const long = 'x'.repeat(50);
    expect(prettyJson({ data: { a: long, b: long } })).toBe(
      `{\n  "data": {\n    "a": "${long}",\n    "b": "${long}"\n  }\n}`,
    );
    expect(prettyJson({ data: { a: long, b: 'y'.repeat(40) } })).toBe(
      `{\n  "data": { "a": "${long}", "b": "${'y'.repeat(40)}" }\n}`,
    );
    expect(prettyJson({ data: { a: long, b: 'y'.repeat(39) }, z: 1 })).toMatch(/^ {2}"data": \{ "a"/m);
    expect(prettyJson({ data: { a: long, b: 'y'.repeat(40) }, z: 1 })).toMatch(/^ {2}"data": \{$/m);
  });
});
