import { isLosslessNumber, parse, stringify } from 'lossless-json';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Throws unless `value` is a bigint in the int64 range, the only ids the API has. */
export function assertInt64(name: string, value: unknown): asserts value is bigint {
  if (typeof value !== 'bigint') {
    throw new TypeError(`${name} must be a bigint (ids are int64, beyond what a number holds exactly)`);
  }
  if (value < INT64_MIN || value > INT64_MAX) throw new RangeError(`${name} must be a signed 64-bit integer`);
}

/**
 * Reads a JSON body with every `id` as an exact bigint and every other number as a number.
 * In this API every int64 is named `id` (src/json.spec.ts checks that against openapi.json), and
 * JSON.parse would round one beyond 2^53.
 */
export function parseJson(text: string): unknown {
  return parse(text, (key, value) => {
    if (!isLosslessNumber(value)) return value;
    if (key !== 'id') return Number(value.value);
    if (!/^-?\d+$/.test(value.value)) throw new SyntaxError(`id ${value.value} is not an integer`);
    const id = BigInt(value.value);
    assertInt64('id', id);
    return id;
  });
}

/** Writes JSON with bigints as bare integers, digit for digit. */
export function writeJson(value: unknown): string {
  return stringify(value) as string;
}
