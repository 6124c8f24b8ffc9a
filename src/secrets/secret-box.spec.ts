import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import { SecretBox, UnknownSealingKey, keyIdOf, sealedPrefix } from './secret-box';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The sealed text with one byte of its `part`-th dot-separated field flipped. */
function tampered(sealed: string, part: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[part], 'base64url');
  bytes[0] ^= 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

describe(SecretBox.name, () => {
  const key = randomBytes(32);

  it('opens what it sealed', () => {
    const box = new SecretBox([key]);
    expect(box.open(box.seal(SECRET))).toBe(SECRET);
  });

  it('seals the same secret differently each time, never in clear', () => {
    const box = new SecretBox([key]);
    const first = box.seal(SECRET);
    const second = box.seal(SECRET);
    expect(first).not.toBe(second);
    for (const sealed of [first, second]) {
      expect(sealed).not.toContain(SECRET);
      expect(sealed).not.toContain(SECRET.slice('whsec_'.length));
      expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64url'));
    }
  });

  it('opens with a rotated key list what the old key sealed, and seals with the new key', () => {
    const newKey = randomBytes(32);
    const sealedByOld = new SecretBox([key]).seal(SECRET);
    const rotated = new SecretBox([newKey, key]);

    expect(rotated.open(sealedByOld)).toBe(SECRET);
    const sealedByNew = rotated.seal(SECRET);
    expect(new SecretBox([newKey]).open(sealedByNew)).toBe(SECRET);
    expect(() => new SecretBox([key]).open(sealedByNew)).toThrow(/not in WEBHOOK_SECRET_KEY/);
  });

  it('names its keys by id, the sealing one first, and starts each sealed text with its key id', () => {
    const newKey = randomBytes(32);
    const box = new SecretBox([newKey, key]);
    expect(keyIdOf(key)).toBe(createHash('sha256').update(key).digest('hex').slice(0, 8));
    expect(box.sealingKeyId).toBe(keyIdOf(newKey));
    expect(box.keyIds).toEqual([keyIdOf(newKey), keyIdOf(key)]);
    expect(box.seal(SECRET).startsWith(sealedPrefix(keyIdOf(newKey)))).toBe(true);
  });

  it('refuses a text sealed with a key it does not have, naming that key by its id only', () => {
    const other = randomBytes(32);
    const sealed = new SecretBox([other]).seal(SECRET);
    let refused: unknown;
    try {
      new SecretBox([key]).open(sealed);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(UnknownSealingKey);
    expect(refused).toMatchObject({
      keyId: keyIdOf(other),
      message: `The secret was sealed with key ${keyIdOf(other)}, which is not in WEBHOOK_SECRET_KEY`,
    });
    expect((refused as Error).message).not.toContain(other.toString('base64'));
  });

  it.each([
    ['ciphertext', 3],
    ['tag', 4],
    ['IV', 2],
  ])('refuses a text whose %s was altered', (_label, part) => {
    const box = new SecretBox([key]);
    expect(() => box.open(tampered(box.seal(SECRET), part))).toThrow('unable to authenticate data');
  });

  it('refuses a text of another version or without a tag as malformed', () => {
    const box = new SecretBox([key]);
    const parts = box.seal(SECRET).split('.');
    expect(() => box.open(['v2', ...parts.slice(1)].join('.'))).toThrow('The sealed secret is malformed');
    expect(() => box.open(parts.slice(0, 4).join('.'))).toThrow('The sealed secret is malformed');
  });

  it.each([4, 8, 12])('refuses a tag cut to %i bytes', (bytes) => {
    const box = new SecretBox([key]);
    const parts = box.seal(SECRET).split('.');
    parts[4] = Buffer.from(parts[4], 'base64url').subarray(0, bytes).toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow('The sealed secret is malformed');
  });

  it('cannot be built without a key', () => {
    expect(() => new SecretBox([])).toThrow('SecretBox needs at least one key');
  });
});
