import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * What the service stores but needs again in clear (webhook signing secrets, and stored answers that
 * carry one) cannot be hashed like access tokens; it is sealed with AES-256-GCM under
 * WEBHOOK_SECRET_KEY instead, so a copy of the database alone does not let anyone forge deliveries.
 * The sealed form names its key (keyIdOf), so keys can be rotated: the first key seals, every key
 * opens.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The hex digits of a key's id. */
export const KEY_ID_HEX_DIGITS = 8;

/** A key's public name: the first KEY_ID_HEX_DIGITS hex digits of its SHA-256. It tells keys apart and reveals nothing of them. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, KEY_ID_HEX_DIGITS);
}

/** The start of every text sealed under the key `keyId`, for finding such texts where they are stored. */
export function sealedPrefix(keyId: string): string {
  return `${VERSION}.${keyId}.`;
}

/**
 * A text sealed under a key this box does not hold: a key retired too early, or a key rolled out to
 * another instance before this one. Its message names the key by its id, never the key.
 */
export class UnknownSealingKey extends Error {
  override readonly name = 'UnknownSealingKey';

  constructor(readonly keyId: string) {
    super(`The secret was sealed with key ${keyId}, which is not in WEBHOOK_SECRET_KEY`);
  }
}

export class SecretBox {
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    this.byId = new Map(keys.map((key) => [keyIdOf(key), key]));
  }

  /** The id of the key that seals: the first. */
  get sealingKeyId(): string {
    return keyIdOf(this.keys[0]);
  }

  /** The ids of every key, the sealing one first. */
  get keyIds(): string[] {
    return this.keys.map(keyIdOf);
  }

  seal(plain: string): string {
    const key = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      VERSION,
      keyIdOf(key),
      iv.toString('base64url'),
      sealed.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
    ].join('.');
  }

  /** Throws UnknownSealingKey when the text was sealed under another key, another Error when it was altered. */
  open(text: string): string {
    const parts = text.split('.');
    const [version, id, iv, sealed, tag] = parts;
    if (parts.length !== 5 || version !== VERSION) throw new Error('The sealed secret is malformed');
    const key = this.byId.get(id);
    if (key === undefined) throw new UnknownSealingKey(id);
    const ivBytes = Buffer.from(iv, 'base64url');
    const tagBytes = Buffer.from(tag, 'base64url');
    // A shortened tag would weaken the check; GCM would accept one unless told its length.
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new Error('The sealed secret is malformed');
    const decipher = createDecipheriv('aes-256-gcm', key, ivBytes, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }
}
