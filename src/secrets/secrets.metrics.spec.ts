import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Registry } from 'prom-client';
import { loadConfig } from '../config/configuration';
import { MetricsService } from '../metrics/metrics.service';
import { SecretBox, keyIdOf } from './secret-box';
import { SecretsMetrics } from './secrets.metrics';
import { SecretsService } from './secrets.service';

const NEW = Buffer.alloc(32, 1);
const OLD = Buffer.alloc(32, 2);
const RETIRED = Buffer.alloc(32, 3);

/** The sample lines of one metric. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.getSingleMetricAsString(name);
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe(SecretsMetrics.name, () => {
  afterEach(() => jest.restoreAllMocks());

  function build(keys: Buffer[]): { registry: Registry; secrets: SecretsService } {
    const env = keys.length ? { WEBHOOK_SECRET_KEY: keys.map((key) => key.toString('base64')).join(',') } : {};
    const secrets = new SecretsService(new ConfigService(loadConfig(env)) as ConfigService<never, true>);
    const registry = new Registry();
    new SecretsMetrics({ registry } as MetricsService, secrets);
    return { registry, secrets };
  }

  it('shows the keys held by id and role, the sealing one first', async () => {
    const { registry } = build([NEW, OLD]);
    await expect(samples(registry, 'secret_keys')).resolves.toEqual([
      `secret_keys{key_id="${keyIdOf(NEW)}",role="sealing"} 1`,
      `secret_keys{key_id="${keyIdOf(OLD)}",role="opening"} 1`,
    ]);
    await expect(samples(build([]).registry, 'secret_keys')).resolves.toEqual([]);
  });

  it('counts the values met under a key not held, by key id', async () => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { registry, secrets } = build([NEW]);
    await expect(samples(registry, 'sealed_values_unopened_total')).resolves.toEqual([]);
    const sealed = new SecretBox([RETIRED]).seal('x');
    expect(() => secrets.open(sealed)).toThrow();
    await expect(samples(registry, 'sealed_values_unopened_total')).resolves.toEqual([
      `sealed_values_unopened_total{key_id="${keyIdOf(RETIRED)}"} 1`,
    ]);
    expect(() => secrets.open(sealed)).toThrow();
    expect(() => secrets.open(sealed)).toThrow();
    await expect(samples(registry, 'sealed_values_unopened_total')).resolves.toEqual([
      `sealed_values_unopened_total{key_id="${keyIdOf(RETIRED)}"} 3`,
    ]);
  });
});
