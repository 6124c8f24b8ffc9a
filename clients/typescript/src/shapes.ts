import { type Answer, invalidResponse, readJson } from './http';
import type { components } from './schema';

type SchemaName = keyof components['schemas'];

/** The JSON type of a property as the client checks it (formats and enums aside: a date-time is a string). */
type Kind<V> = V extends bigint
  ? 'int64'
  : V extends string
    ? 'string'
    : V extends number
      ? 'number'
      : V extends boolean
        ? 'boolean'
        : V extends readonly string[]
          ? 'string[]'
          : V extends object
            ? 'object'
            : never;

/**
 * Every documented property of `T` with its JSON type, `?` when it may be absent: written from
 * openapi.json into src/answers.ts by `npm run generate`, and held by the compiler to the type
 * generated from the same document (a property missing, extra or of another type does not compile).
 */
export type Shape<T> = {
  [K in keyof T]-?: undefined extends T[K] ? `${Kind<Exclude<T[K], undefined>>}?` : Kind<T[K]>;
};

/** What a successful answer's body must be: one `schema` object, or a JSON array of them. */
export interface Expected<T> {
  schema: SchemaName;
  list: boolean;
  shape: Readonly<Record<string, string>>;
  /** Only carries `T` to `readChecked`. */
  readonly data?: T;
}

/** An answer of one `schema` object (src/answers.ts, generated, lists each operation's). */
export const one = <T>(schema: SchemaName, shape: Shape<T>): Expected<T> => ({ schema, list: false, shape });
/** An answer that is a JSON array of `schema` objects. */
export const many = <T>(schema: SchemaName, shape: Shape<T>): Expected<T[]> => ({ schema, list: true, shape });

/**
 * The answer's body, if it has the documented shape: the documented properties present and of
 * their types (properties the client does not know of are let through, so the service may add
 * some). Otherwise an `invalid-response` error that names the first difference, never a value.
 */
export function readChecked<T>(answer: Answer, expected: Expected<T>): T {
  const body = readJson(answer);
  const problem = expected.list ? listProblem(body, expected.shape) : objectProblem(body, expected.shape, 'the body');
  if (problem !== undefined) throw invalidResponse(answer, problem);
  return body as T;
}

function listProblem(value: unknown, shape: Expected<unknown>['shape']): string | undefined {
  if (!Array.isArray(value)) return 'the body is not a JSON array';
  for (const [index, item] of value.entries()) {
    const problem = objectProblem(item, shape, `item ${index}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function objectProblem(value: unknown, shape: Expected<unknown>['shape'], where: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${where} is not a JSON object`;
  const object = value as Record<string, unknown>;
  for (const [name, kind] of Object.entries(shape)) {
    const optional = kind.endsWith('?');
    const type = optional ? kind.slice(0, -1) : kind;
    if (!Object.hasOwn(object, name)) {
      if (optional) continue;
      return `${where} has no ${name}`;
    }
    if (!isOfKind(object[name], type)) return `${name} of ${where} is not ${ARTICLES[type] ?? type}`;
  }
  return undefined;
}

const ARTICLES: Record<string, string> = {
  int64: 'an int64',
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  'string[]': 'an array of strings',
  object: 'a JSON object',
};

function isOfKind(value: unknown, kind: string): boolean {
  switch (kind) {
    case 'int64':
      // parseJson has made every `id` a bigint in the int64 range; anything else is not one.
      return typeof value === 'bigint';
    case 'number':
      return typeof value === 'number';
    case 'string[]':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return typeof value === kind;
  }
}
