export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** Longest decimal text of an int64 ("-9223372036854775808"), with room for a few leading zeros. */
const MAX_DIGITS_TEXT = 24;

/** The one wording of the int64 rule, for bodies, paths and query strings alike. */
export function int64RangeMessage(name: string): string {
  return `${name} must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
}

export function isInt64(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

/**
 * Reads an int64 written in decimal ("42", "-7"), as it arrives in paths and query strings.
 * Anything else (signs other than "-", spaces, fractions, exponents, out of range) is null.
 */
export function parseInt64(text: unknown): bigint | null {
  if (typeof text !== 'string' || text.length > MAX_DIGITS_TEXT || !/^-?\d+$/.test(text)) {
    return null;
  }
  const value = BigInt(text);
  return isInt64(value) ? value : null;
}

/**
 * BIGINT columns come back as decimal strings from mysql2 (bigNumberStrings) and as BigInt from
 * better-sqlite3 (safe integers): both become a bigint, so no id is ever rounded through a double.
 */
export const int64Transformer = {
  to: (value: bigint | undefined): bigint | undefined => value,
  from: (value: string | number | bigint | null): bigint | null => (value === null ? null : BigInt(value)),
};
