import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../config/configuration';
import { SecretBox, UnknownSealingKey, keyIdOf } from './secret-box';
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
});
