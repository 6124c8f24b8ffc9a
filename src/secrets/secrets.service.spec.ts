import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../config/configuration';
import { DEVELOPMENT_KEY } from './development-key';
import { SecretBox, UnknownSealingKey, keyIdOf } from './secret-box';
import { SealedStore, SealedValue } from './sealed-store';
import { SecretsService } from './secrets.service';

const KEY = Buffer.alloc(32, 7);
const OTHER = Buffer.alloc(32, 9);
const RETIRED = Buffer.alloc(32, 11);
const keys = (...list: Buffer[]) => ({ WEBHOOK_SECRET_KEY: list.map((key) => key.toString('base64')).join(',') });

async function build(env: Record<string, string>): Promise<SecretsService> {
  const moduleRef = await Test.createTestingModule({
    providers: [SecretsService, { provide: ConfigService, useValue: new ConfigService(loadConfig(env)) }],
  }).compile();
  return moduleRef.get(SecretsService);
}

/** A store in memory, in ref order, that can be told a value changes between its read and its write. */
class MemoryStore implements SealedStore<number> {
  readonly name = 'test values';
  readonly values = new Map<number, string>();
  readonly listed: (number | undefined)[] = [];
  changeBeforeWrite?: number;

  listNotSealedUnder(prefix: string, after: number | undefined, limit: number): Promise<SealedValue<number>[]> {
    this.listed.push(after);
    const due = [...this.values]
      .sort(([a], [b]) => a - b)
      .filter(([ref, sealed]) => ref > (after ?? -1) && !sealed.startsWith(prefix))
      .slice(0, limit);
    return Promise.resolve(due.map(([ref, sealed]) => ({ ref, sealed })));
  }

  replace(ref: number, sealed: string, resealed: string): Promise<boolean> {
    if (ref === this.changeBeforeWrite) this.values.set(ref, 'changed');
    if (this.values.get(ref) !== sealed) return Promise.resolve(false);
    this.values.set(ref, resealed);
    return Promise.resolve(true);
  }
}

describe(SecretsService.name, () => {
  it('seals with the first key of WEBHOOK_SECRET_KEY and opens with any of them', async () => {
    const secrets = await build(keys(KEY, OTHER));
    expect(secrets.configured).toBe(true);
    expect(secrets.keyIds).toEqual([keyIdOf(KEY), keyIdOf(OTHER)]);
    const sealed = secrets.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(new SecretBox([KEY]).open(sealed)).toBe('whsec_abc');
    expect(secrets.open(new SecretBox([OTHER]).seal('rotated'))).toBe('rotated');
  });

  it('seals with the development key only while WEBHOOK_SECRET_KEY is unset', async () => {
    const withDevelopmentKey = async (env: Record<string, string>) =>
      (
        await Test.createTestingModule({
          providers: [
            SecretsService,
            { provide: ConfigService, useValue: new ConfigService(loadConfig(env)) },
            { provide: DEVELOPMENT_KEY, useValue: RETIRED },
          ],
        }).compile()
      ).get(SecretsService);
    await expect(withDevelopmentKey({})).resolves.toMatchObject({ configured: true, keyIds: [keyIdOf(RETIRED)] });
    await expect(withDevelopmentKey(keys(KEY))).resolves.toMatchObject({ keyIds: [keyIdOf(KEY)] });
  });

  it('seals and opens nothing without WEBHOOK_SECRET_KEY', async () => {
    const secrets = await build({});
    expect(secrets.configured).toBe(false);
    expect(secrets.keyIds).toEqual([]);
    expect(() => secrets.seal('whsec_abc')).toThrow('Sealing a secret needs WEBHOOK_SECRET_KEY');
    expect(() => secrets.open(new SecretBox([KEY]).seal('x'))).toThrow('Sealing a secret needs WEBHOOK_SECRET_KEY');
  });

  describe('a value under a key it does not hold', () => {
    afterEach(() => jest.restoreAllMocks());

    it('is refused as such, logged as an error naming the key id (never a key) and counted', async () => {
      const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const secrets = await build(keys(KEY));
      const sealed = new SecretBox([RETIRED]).seal('whsec_abc');
      expect(() => secrets.open(sealed)).toThrow(UnknownSealingKey);
      expect(() => secrets.open(sealed)).toThrow(UnknownSealingKey);
      expect(secrets.unopenedByKey).toEqual(new Map([[keyIdOf(RETIRED), 2]]));
      expect(logged).toHaveBeenCalledTimes(2);
      const line = String(logged.mock.calls[0][0]);
      expect(line).toContain(`sealed with key ${keyIdOf(RETIRED)}, which this instance does not hold`);
      expect(line).toContain(`WEBHOOK_SECRET_KEY has ${keyIdOf(KEY)}`);
      for (const key of [KEY, RETIRED]) {
        expect(line).not.toContain(key.toString('base64'));
        expect(line).not.toContain(key.toString('base64url'));
      }
    });

    it('is neither logged nor counted when it was merely altered', async () => {
      const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const secrets = await build(keys(KEY));
      expect(() => secrets.open('v1.garbage')).toThrow('The sealed secret is malformed');
      expect(secrets.unopenedByKey.size).toBe(0);
      expect(logged).not.toHaveBeenCalled();
    });
  });

  describe('reseal', () => {
    it('seals again under the first key what other keys sealed, in batches; a second run finds nothing', async () => {
      const secrets = await build(keys(KEY, OTHER));
      const store = new MemoryStore();
      const old = new SecretBox([OTHER]);
      for (let ref = 1; ref <= 5; ref++) store.values.set(ref, old.seal(`secret-${ref}`));
      const current = secrets.seal('secret-6');
      store.values.set(6, current);

      await expect(secrets.reseal(store, 2)).resolves.toEqual({
        name: 'test values',
        resealed: 5,
        changed: 0,
        unknownKeys: {},
        unreadable: 0,
      });
      expect(store.listed).toEqual([undefined, 2, 4]);
      const onlyNew = new SecretBox([KEY]);
      for (let ref = 1; ref <= 5; ref++) expect(onlyNew.open(store.values.get(ref)!)).toBe(`secret-${ref}`);
      expect(store.values.get(6)).toBe(current);

      await expect(secrets.reseal(store, 2)).resolves.toMatchObject({ resealed: 0, changed: 0 });
    });

    it('leaves what it cannot open, counted by key id, and what changed meanwhile, counted', async () => {
      const secrets = await build(keys(KEY, OTHER));
      const store = new MemoryStore();
      const retired = new SecretBox([RETIRED]).seal('lost');
      store.values.set(1, retired);
      store.values.set(2, new SecretBox([OTHER]).seal('raced'));
      store.values.set(3, 'v1.garbage');
      store.values.set(4, new SecretBox([OTHER]).seal('fine'));
      store.changeBeforeWrite = 2;

      await expect(secrets.reseal(store)).resolves.toEqual({
        name: 'test values',
        resealed: 1,
        changed: 1,
        unknownKeys: { [keyIdOf(RETIRED)]: 1 },
        unreadable: 1,
      });
      expect(store.values.get(1)).toBe(retired);
      expect(store.values.get(2)).toBe('changed');
      expect(secrets.unopenedByKey.size).toBe(0);
    });

    it('needs a key', async () => {
      await expect((await build({})).reseal(new MemoryStore())).rejects.toThrow(
        'Sealing a secret needs WEBHOOK_SECRET_KEY',
      );
    });
  });
});
