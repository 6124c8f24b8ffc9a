import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'pst_';
const SECRET_BYTES = 32; // 256 bits of randomness
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;

export function generateTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

export function hashTokenSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Shape check before any lookup, so garbage never costs a database round trip. */
export function looksLikeTokenSecret(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

/** The secret of an `Authorization: Bearer <secret>` header (RFC 6750), or null. */
export function bearerSecretOf(header: string | undefined): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match ? match[1] : null;
}
