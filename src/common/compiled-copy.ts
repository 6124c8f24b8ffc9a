/** A field a compiled copy reads: its name, and how its value is converted (taken as it is when absent). */
export interface CopiedField {
  name: string;
  convert?: (value: unknown) => unknown;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * JavaScript for reading each field of `from`, converted: `from.id`, `convert[1](from.id)`. The names
 * are the properties a class declares, identifiers by construction; anything else is refused.
 */
function reads(fields: readonly CopiedField[]): string[] {
  return fields.map(({ name, convert }, i) => {
    if (!IDENTIFIER.test(name)) throw new Error(`${name} is not a property name a compiled copy can use`);
    return convert === undefined ? `from.${name}` : `convert[${i}](from.${name})`;
  });
}

function compile<T>(fields: readonly CopiedField[], body: string): T {
  const make = new Function('convert', `'use strict'; return function copy(from) { ${body} };`) as (
    convert: readonly (((value: unknown) => unknown) | undefined)[],
  ) => T;
  return make(fields.map((field) => field.convert));
}

/**
 * A function, made once, that copies the fields of an object into a new one, each converted; with
 * `leaveOutNull`, a field whose value is null or undefined is left out. Written out for its fields
 * as a hand-written copy would be (`to.id = from.id; ...`), so V8 sees every read and store by
 * name and keeps the shapes of what it copies and makes fixed: a loop storing by a computed name
 * cost a page of 21 plants twice what the whole hand-written mapping does, and a row built for an
 * INSERT several times more than this.
 */
export function compileCopy<T>(
  fields: readonly CopiedField[],
  { leaveOutNull = false }: { leaveOutNull?: boolean } = {},
): (from: object) => T {
  const steps = reads(fields).map((read, i) => {
    const name = fields[i].name;
    return leaveOutNull
      ? `value = ${read}; if (value !== null && value !== undefined) to.${name} = value;`
      : `to.${name} = ${read};`;
  });
  return compile(fields, `const to = {}; let value; ${steps.join(' ')} return to;`);
}

/** A function, made once, that lists the fields of an object in order, each converted, null for one it has not. */
export function compileList(fields: readonly CopiedField[]): (from: object) => unknown[] {
  return compile(
    fields,
    `return [${reads(fields)
      .map((read) => `${read} ?? null`)
      .join(', ')}];`,
  );
}
