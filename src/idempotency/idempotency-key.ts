import { createHash } from 'node:crypto';
import { toExactJson } from '../common/json/exact-json';
import { InvalidIdempotencyKey } from './idempotency.errors';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency.limits';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const KEY = new RegExp(`^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

/**
 * The key as sent, or a 400. Two `Idempotency-Key` fields arrive joined by ", " and so are refused
 * too: a request must not be matched by either of two keys.
 */
export function parseIdempotencyKey(value: string | string[]): string {
  if (typeof value !== 'string' || !KEY.test(value)) {
    throw new InvalidIdempotencyKey();
  }
  return value;
}

/** JSON with object keys sorted at every level: the same document however its members were ordered. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const object = value as Record<string, unknown>;
    const members = Object.keys(object)
      .sort()
      .filter((key) => object[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`);
    return `{${members.join(',')}}`;
  }
  return toExactJson(value) ?? 'null';
}

/**
 * What a repeat must match to be given the stored answer: the method, the path (so a key reused on
 * another id of the same route is a different request) and the body as parsed, so whitespace and
 * member order do not make a retry "different".
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${path}\n${body === undefined ? '' : canonicalJson(body)}`)
    .digest('hex');
}
