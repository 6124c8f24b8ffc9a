import { randomBytes } from 'node:crypto';

/** The random bytes of a signing secret. */
export const SIGNING_SECRET_BYTES = 32;

/** A Standard Webhooks signing secret: `whsec_` and SIGNING_SECRET_BYTES random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(SIGNING_SECRET_BYTES).toString('base64')}`;
}
