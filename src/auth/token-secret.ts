import { hash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'pst_';
/** The random bytes of a token's secret: 256 bits. */
export const TOKEN_SECRET_BYTES = 32;
/** Its length after the prefix: base64url without padding, 4 characters per 3 bytes. */
export const TOKEN_SECRET_CHARACTERS = Math.ceil((TOKEN_SECRET_BYTES * 4) / 3);
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[A-Za-z0-9_-]{${TOKEN_SECRET_CHARACTERS}}$`);

export function generateTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_SECRET_BYTES).toString('base64url');
}

/** SHA-256, hex. Runs twice per request (rate limit, authentication): the one-shot form costs least. */
export function hashTokenSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Shape check before any lookup, so garbage never costs a database round trip. */
export function looksLikeTokenSecret(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}
