import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { request as httpRequest } from 'node:http';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { MetricsService } from './metrics.service';

/** The fields of a mysql2 pool the gauges read (mysql2 keeps them in Denque queues with a length). */
interface PoolShape {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
  config?: { connectionLimit?: number };
}

function mysqlPool(open: number, idle: number, waiting: number, limit?: number): PoolShape {
  return {
    _allConnections: { length: open },
    _freeConnections: { length: idle },
    _connectionQueue: { length: waiting },
    config: limit === undefined ? {} : { connectionLimit: limit },
  };
}

async function serviceWith(dataSource: object, databaseType: 'mysql' | 'sqlite' = 'mysql'): Promise<MetricsService> {
  const values: Record<string, unknown> = { host: '127.0.0.1', 'metrics.port': 0, 'database.type': databaseType };
  const moduleRef = await Test.createTestingModule({
    providers: [
      MetricsService,
      { provide: ConfigService, useValue: { get: (key: string) => values[key] } },
      { provide: DataSource, useValue: dataSource },
    ],
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
      const service = await serviceWith({ isInitialized: false });
      const text = await service.registry.metrics();
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      expect(text).toContain('nodejs_eventloop_lag_seconds');
    });

    it('gives each instance its own registry', async () => {
      const first = await serviceWith({ isInitialized: false });
      const second = await serviceWith({ isInitialized: false });
      counter(first).inc();
      expect(await samples(first, 'test_events_total')).toEqual(['test_events_total 1']);
      expect(await samples(second, 'test_events_total')).toEqual([]);
    });
  });

  describe('pool gauges', () => {
    it('read the connections of a mysql2 pool: in use, idle, the maximum and the waiting queries', async () => {
      const service = await serviceWith({ isInitialized: true, driver: { pool: mysqlPool(7, 2, 3, 10) } });
      expect(await samples(service, 'db_pool_')).toEqual([
        'db_pool_connections{state="in_use"} 5',
        'db_pool_connections{state="idle"} 2',
        'db_pool_connections{state="max"} 10',
        'db_pool_waiting_requests 3',
      ]);
    });

    it('follow the pool as it changes', async () => {
      const pool = mysqlPool(1, 1, 0, 4);
      const service = await serviceWith({ isInitialized: true, driver: { pool } });
      expect(await samples(service, 'db_pool_connections{state="in_use"}')).toEqual([
        'db_pool_connections{state="in_use"} 0',
      ]);
      pool._allConnections = { length: 4 };
      pool._freeConnections = { length: 0 };
      pool._connectionQueue = { length: 6 };
      expect(await samples(service, 'db_pool_')).toEqual([
        'db_pool_connections{state="in_use"} 4',
        'db_pool_connections{state="idle"} 0',
        'db_pool_connections{state="max"} 4',
        'db_pool_waiting_requests 6',
      ]);
    });

    it('leave out the maximum when the pool does not say it', async () => {
      const service = await serviceWith({ isInitialized: true, driver: { pool: mysqlPool(3, 1, 0) } });
      expect(await samples(service, 'db_pool_connections')).toEqual([
        'db_pool_connections{state="in_use"} 2',
        'db_pool_connections{state="idle"} 1',
      ]);
    });

    it('are absent for SQLite, whose driver has no pool', async () => {
      const service = await serviceWith({ isInitialized: true, driver: { databaseConnection: {} } }, 'sqlite');
      expect(await samples(service, 'db_pool_')).toEqual([]);
    });

    it('report no connections before the data source is initialized', async () => {
      const service = await serviceWith({ isInitialized: false, driver: { pool: mysqlPool(1, 1, 0, 10) } });
      expect(await samples(service, 'db_pool_connections')).toEqual([]);
    });
  });

  describe('listener', () => {
    let service: MetricsService;

    beforeEach(async () => {
      service = await serviceWith({ isInitialized: false });
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
    const first = await serviceWith({ isInitialized: false });
    await first.onApplicationBootstrap();
    try {
      const values: Record<string, unknown> = { host: '127.0.0.1', 'metrics.port': first.port };
      const second = new MetricsService(
        { get: (key: string) => values[key] } as unknown as ConfigService<AppConfig, true>,
        { isInitialized: false } as unknown as DataSource,
      );
      await expect(second.onApplicationBootstrap()).rejects.toThrow(/EADDRINUSE/);
      expect(second.port).toBeUndefined();
    } finally {
      await first.onApplicationShutdown();
    }
  });
});
