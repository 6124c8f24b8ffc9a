import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { request as httpRequest } from 'node:http';
import { Counter } from 'prom-client';
import { AppConfig } from '../config/configuration';
import { MetricsService } from './metrics.service';

async function serviceWith(): Promise<MetricsService> {
  const values: Record<string, unknown> = { host: '127.0.0.1', 'metrics.port': 0 };
  const moduleRef = await Test.createTestingModule({
    providers: [MetricsService, { provide: ConfigService, useValue: { get: (key: string) => values[key] } }],
  }).compile();
  return moduleRef.get(MetricsService);
}

/** A metric of the test's own, declared on the service's registry as a feature declares its metrics. */
function counter(service: MetricsService): Counter {
  return new Counter({ name: 'test_events_total', help: 'Events of the test', registers: [service.registry] });
}

/** The sample lines (no # HELP / # TYPE) of the metrics whose name starts with `prefix`. */
async function samples(service: MetricsService, prefix: string): Promise<string[]> {
  const text = await service.registry.metrics();
  return text.split('\n').filter((line) => line.startsWith(prefix));
}

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; type?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'],
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe(MetricsService.name, () => {
  describe('registry', () => {
    it('holds the default process metrics', async () => {
      const service = await serviceWith();
      const text = await service.registry.metrics();
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      expect(text).toContain('nodejs_eventloop_lag_seconds');
    });

    it('gives each instance its own registry', async () => {
      const first = await serviceWith();
      const second = await serviceWith();
      counter(first).inc();
      expect(await samples(first, 'test_events_total')).toEqual(['test_events_total 1']);
      expect(await samples(second, 'test_events_total')).toEqual([]);
    });
  });

  describe('listener', () => {
    let service: MetricsService;

    beforeEach(async () => {
      service = await serviceWith();
      await service.onApplicationBootstrap();
    });
    afterEach(() => service.onApplicationShutdown());

    it('listens on a free port when METRICS_PORT is 0 and tells which', () => {
      expect(service.port).toEqual(expect.any(Number));
      expect(service.port).toBeGreaterThan(0);
    });

    it('serves GET /metrics in the Prometheus text format', async () => {
      counter(service).inc(3);
      const res = await get(service.port as number, '/metrics');
      expect(res.status).toBe(200);
      expect(res.type).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.body).toContain('# TYPE test_events_total counter\ntest_events_total 3\n');
      expect(res.body).toContain('process_resident_memory_bytes');
    });

    it('serves /metrics with a query string too', async () => {
      expect((await get(service.port as number, '/metrics?name[]=x')).status).toBe(200);
    });

    it.each([
      ['GET', '/'],
      ['GET', '/plants'],
      ['GET', '/metricsx'],
      ['GET', '/metrics/'],
      ['POST', '/metrics'],
      ['DELETE', '/metrics'],
    ])('answers %s %s with 404', async (method, path) => {
      const res = await get(service.port as number, path, method);
      expect(res.status).toBe(404);
      expect(res.body).not.toContain('process_resident_memory_bytes');
    });

    it('closes on shutdown', async () => {
      const port = service.port as number;
      await service.onApplicationShutdown();
      expect(service.port).toBeUndefined();
      await expect(get(port, '/metrics')).rejects.toThrow(/ECONNREFUSED/);
      await service.onApplicationShutdown(); // twice is harmless
    });
  });

  it('fails to start when its port is taken', async () => {
    const first = await serviceWith();
    await first.onApplicationBootstrap();
    try {
      const values: Record<string, unknown> = { host: '127.0.0.1', 'metrics.port': first.port };
      const second = new MetricsService({ get: (key: string) => values[key] } as unknown as ConfigService<
        AppConfig,
        true
      >);
      await expect(second.onApplicationBootstrap()).rejects.toThrow(/EADDRINUSE/);
      expect(second.port).toBeUndefined();
    } finally {
      await first.onApplicationShutdown();
    }
  });
});
