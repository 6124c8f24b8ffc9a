import { ServiceUnavailableException } from '@nestjs/common';
import { Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { HealthMetrics } from './health.metrics';
import { HealthService } from './health.service';

describe(HealthMetrics.name, () => {
  let registry: Registry;
  let ready: jest.Mock;

  beforeEach(() => {
    registry = new Registry();
    ready = jest.fn();
    new HealthMetrics({ registry } as MetricsService, { ready } as unknown as HealthService);
  });

  const scraped = async () => (await registry.getSingleMetric('health_ready')!.get()).values.map((v) => v.value);

  it('is 1 when readiness would answer 200 and 0 when it would answer 503, checked at each scrape', async () => {
    ready.mockResolvedValue({ status: 'ok', info: {} });
    await expect(scraped()).resolves.toEqual([1]);
    ready.mockRejectedValue(new ServiceUnavailableException('Not ready: database is down'));
    await expect(scraped()).resolves.toEqual([0]);
    ready.mockResolvedValue({ status: 'ok', info: {} });
    await expect(scraped()).resolves.toEqual([1]);
    expect(ready).toHaveBeenCalledTimes(3);
  });

  it('is NaN when the check itself failed unexpectedly', async () => {
    ready.mockRejectedValue(new TypeError('bug'));
    await expect(scraped()).resolves.toEqual([Number.NaN]);
  });
});
