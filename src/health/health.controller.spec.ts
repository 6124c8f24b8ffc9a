import { ServiceUnavailableException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthIndicatorResult, TerminusModule, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { DATABASE_PING_TIMEOUT_MS, HealthController } from './health.controller';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { GaleraHealthIndicator } from './galera.health';
import { SchemaHealthIndicator } from './schema.health';

const DRIVER_MESSAGE = "connect ECONNREFUSED 10.20.30.40:3306 (Access denied for user 'plantstore'@'10.0.0.7')";

const up = (key: string): HealthIndicatorResult => ({ [key]: { status: 'up' } });
const down = (key: string, message: string): HealthIndicatorResult => ({ [key]: { status: 'down', message } });

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

describe(HealthController.name, () => {
  let controller: HealthController;
  let shutdown: ShutdownState;
  let database: { pingCheck: jest.Mock };
  let schema: { check: jest.Mock };
  let galera: { applies: jest.Mock; check: jest.Mock };
  let registry: Registry;

  beforeEach(async () => {
    database = { pingCheck: jest.fn(async (key: string) => up(key)) };
    schema = { check: jest.fn(async (key: string) => up(key)) };
    galera = { applies: jest.fn(async () => false), check: jest.fn(async (key: string) => up(key)) };
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController],
      providers: [
        ShutdownState,
        { provide: SchemaHealthIndicator, useValue: schema },
        { provide: GaleraHealthIndicator, useValue: galera },
        { provide: MetricsService, useValue: { registry: (registry = new Registry()) } },
      ],
    })
      .overrideProvider(TypeOrmHealthIndicator)
      .useValue(database)
      .compile();
    controller = moduleRef.get(HealthController);
    shutdown = moduleRef.get(ShutdownState);
  });

  describe('live', () => {
    it('is ok without checking the database', async () => {
      await expect(controller.live()).resolves.toEqual({ status: 'ok', info: {} });
      expect(database.pingCheck).not.toHaveBeenCalled();
      expect(schema.check).not.toHaveBeenCalled();
    });

    it('stays ok while the instance shuts down, and when the database is down', async () => {
      shutdown.begin();
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      await expect(controller.live()).resolves.toEqual({ status: 'ok', info: {} });
    });
  });

  describe('ready', () => {
    it('is ok, naming each dependency up, when the database answers', async () => {
      await expect(controller.ready()).resolves.toEqual({
        status: 'ok',
        info: { lifecycle: { status: 'up' }, database: { status: 'up' }, schema: { status: 'up' } },
      });
      expect(database.pingCheck).toHaveBeenCalledWith('database', { timeout: DATABASE_PING_TIMEOUT_MS });
      expect(schema.check).toHaveBeenCalledWith('schema', DATABASE_PING_TIMEOUT_MS);
    });

    it('answers 503 naming the schema when the database answers but its tables do not', async () => {
      schema.check.mockResolvedValue(down('schema', "Table 'plantstore.plants' doesn't exist"));
      const error = await rejectionOf(controller.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toBe(
        'Not ready: the database schema is missing tables or columns the service uses',
      );
    });

    it('names only the database when it does not answer at all', async () => {
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      schema.check.mockResolvedValue(down('schema', DRIVER_MESSAGE));
      await expect(controller.ready()).rejects.toThrow(/^Not ready: database is down$/);
    });

    it('answers 503 naming the database, never the driver message, when the database is down', async () => {
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      const error = await rejectionOf(controller.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      const { message } = error as ServiceUnavailableException;
      expect(message).toBe('Not ready: database is down');
      expect(message).not.toContain('ECONNREFUSED');
      expect(message).not.toContain('10.20.30.40');
      expect(message).not.toContain('plantstore');
      // Nothing from the terminus result rides along in the response either.
      expect(JSON.stringify((error as ServiceUnavailableException).getResponse())).not.toContain('ECONNREFUSED');
    });

    it('answers 503 saying the instance is shutting down once shutdown has begun', async () => {
      await expect(controller.ready()).resolves.toMatchObject({ status: 'ok' });
      shutdown.begin();
      const error = await rejectionOf(controller.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toBe('Not ready: the instance is shutting down');
      expect(shutdown.isShuttingDown).toBe(true);
    });

    it('names both when shutting down with the database down', async () => {
      shutdown.begin();
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      const error = await rejectionOf(controller.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toMatch(/shutting down/);
      expect((error as Error).message).toMatch(/database is down/);
      expect((error as Error).message).not.toContain('ECONNREFUSED');
    });

    it('on a Galera node, also asks the node whether it is synced, and names it when not', async () => {
      await controller.ready();
      expect(galera.check).not.toHaveBeenCalled();
      galera.applies.mockResolvedValue(true);
      await expect(controller.ready()).resolves.toMatchObject({ info: { cluster: { status: 'up' } } });
      galera.check.mockResolvedValue(down('cluster', 'not synced'));
      const error = await rejectionOf(controller.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toBe('Not ready: the database node is not synced with its cluster');
    });

    it('passes on an unexpected failure as it is, not as a 503', async () => {
      const bug = new TypeError('cannot read properties of undefined');
      database.pingCheck.mockRejectedValue(bug);
      await expect(controller.ready()).rejects.toBe(bug);
    });
  });

  describe('health_ready', () => {
    const scraped = async () => (await registry.getSingleMetric('health_ready')!.get()).values.map((v) => v.value);

    it('is 1 when readiness would answer 200 and 0 when it would answer 503, checked at each scrape', async () => {
      await expect(scraped()).resolves.toEqual([1]);
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      await expect(scraped()).resolves.toEqual([0]);
      database.pingCheck.mockResolvedValue(up('database'));
      await expect(scraped()).resolves.toEqual([1]);
      shutdown.begin();
      await expect(scraped()).resolves.toEqual([0]);
    });

    it('is NaN when the check itself failed unexpectedly', async () => {
      database.pingCheck.mockRejectedValue(new TypeError('bug'));
      await expect(scraped()).resolves.toEqual([Number.NaN]);
    });
  });
});
