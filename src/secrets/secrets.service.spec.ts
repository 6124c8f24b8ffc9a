import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { loadConfig } from '../config/configuration';
import { SecretBox } from './secret-box';
import { SecretsService } from './secrets.service';

const KEY = Buffer.alloc(32, 7);
const OTHER = Buffer.alloc(32, 9);

async function build(env: Record<string, string>): Promise<SecretsService> {
  const moduleRef = await Test.createTestingModule({
    providers: [SecretsService, { provide: ConfigService, useValue: new ConfigService(loadConfig(env)) }],
  }).compile();
  return moduleRef.get(SecretsService);
}

describe(SecretsService.name, () => {
  it('seals with the first key of WEBHOOK_SECRET_KEY and opens with any of them', async () => {
    const secrets = await build({ WEBHOOK_SECRET_KEY: `${KEY.toString('base64')},${OTHER.toString('base64')}` });
    expect(secrets.configured).toBe(true);
    const sealed = secrets.seal('whsec_abc');
    expect(sealed).not.toContain('whsec_abc');
    expect(new SecretBox([KEY]).open(sealed)).toBe('whsec_abc');
    expect(secrets.open(new SecretBox([OTHER]).seal('rotated'))).toBe('rotated');
  });

  it('seals and opens nothing without WEBHOOK_SECRET_KEY', async () => {
    const secrets = await build({});
    expect(secrets.configured).toBe(false);
    expect(() => secrets.seal('whsec_abc')).toThrow('Sealing a secret needs WEBHOOK_SECRET_KEY');
    expect(() => secrets.open(new SecretBox([KEY]).seal('x'))).toThrow('Sealing a secret needs WEBHOOK_SECRET_KEY');
  });
});
