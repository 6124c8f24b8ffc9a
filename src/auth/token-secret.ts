import { hash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'pst_';
const SECRET_BYTES = 32; // 256 bits of randomness
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;

export function generateTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

/** SHA-256, hex. Runs twice per request (rate limit, authentication): the one-shot form costs least. */
export function hashTokenSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Shape check before any lookup, so garbage never costs a database round trip. */
export function looksLikeTokenSecret(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}
