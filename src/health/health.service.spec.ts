import { ServiceUnavailableException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthIndicatorResult, TerminusModule, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DATABASE_PING_TIMEOUT_MS, HealthService } from './health.service';
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

describe(HealthService.name, () => {
  let service: HealthService;
  let shutdown: ShutdownState;
  let database: { pingCheck: jest.Mock };
  let schema: { check: jest.Mock };
  let galera: { applies: jest.Mock; check: jest.Mock };

  beforeEach(async () => {
    database = { pingCheck: jest.fn(async (key: string) => up(key)) };
    schema = { check: jest.fn(async (key: string) => up(key)) };
    galera = { applies: jest.fn(async () => false), check: jest.fn(async (key: string) => up(key)) };
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false })],
      providers: [
        HealthService,
        ShutdownState,
        { provide: SchemaHealthIndicator, useValue: schema },
        { provide: GaleraHealthIndicator, useValue: galera },
      ],
    })
      .overrideProvider(TypeOrmHealthIndicator)
      .useValue(database)
      .compile();
    service = moduleRef.get(HealthService);
    shutdown = moduleRef.get(ShutdownState);
  });

  describe('live', () => {
    it('is ok without checking the database', async () => {
      await expect(service.live()).resolves.toEqual({ status: 'ok', info: {} });
      expect(database.pingCheck).not.toHaveBeenCalled();
      expect(schema.check).not.toHaveBeenCalled();
    });

    it('stays ok while the instance shuts down, and when the database is down', async () => {
      shutdown.begin();
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      await expect(service.live()).resolves.toEqual({ status: 'ok', info: {} });
    });
  });

  describe('ready', () => {
    it('is ok, naming each dependency up, when the database answers', async () => {
      await expect(service.ready()).resolves.toEqual({
        status: 'ok',
        info: { lifecycle: { status: 'up' }, database: { status: 'up' }, schema: { status: 'up' } },
      });
      expect(database.pingCheck).toHaveBeenCalledWith('database', { timeout: DATABASE_PING_TIMEOUT_MS });
      expect(schema.check).toHaveBeenCalledWith('schema', DATABASE_PING_TIMEOUT_MS);
    });

    it('answers 503 naming the schema when the database answers but its tables do not', async () => {
      schema.check.mockResolvedValue(down('schema', "Table 'plantstore.plants' doesn't exist"));
      const error = await rejectionOf(service.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toBe(
        'Not ready: the database schema is missing tables or columns the service uses',
      );
    });

    it('names only the database when it does not answer at all', async () => {
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      schema.check.mockResolvedValue(down('schema', DRIVER_MESSAGE));
      await expect(service.ready()).rejects.toThrow(/^Not ready: database is down$/);
    });

    it('answers 503 naming the database, never the driver message, when the database is down', async () => {
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      const error = await rejectionOf(service.ready());
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
      await expect(service.ready()).resolves.toMatchObject({ status: 'ok' });
      shutdown.begin();
      const error = await rejectionOf(service.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toBe('Not ready: the instance is shutting down');
      expect(shutdown.isShuttingDown).toBe(true);
    });

    it('names both when shutting down with the database down', async () => {
      shutdown.begin();
      database.pingCheck.mockResolvedValue(down('database', DRIVER_MESSAGE));
      const error = await rejectionOf(service.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toMatch(/shutting down/);
      expect((error as Error).message).toMatch(/database is down/);
      expect((error as Error).message).not.toContain('ECONNREFUSED');
    });

    it('on a Galera node, also asks the node whether it is synced, and names it when not', async () => {
      await service.ready();
      expect(galera.check).not.toHaveBeenCalled();
      galera.applies.mockResolvedValue(true);
      await expect(service.ready()).resolves.toMatchObject({ info: { cluster: { status: 'up' } } });
      galera.check.mockResolvedValue(down('cluster', 'not synced'));
      const error = await rejectionOf(service.ready());
      expect(error).toBeInstanceOf(ServiceUnavailableException);
      expect((error as Error).message).toBe('Not ready: the database node is not synced with its cluster');
    });

    it('passes on an unexpected failure as it is, not as a 503', async () => {
      const bug = new TypeError('cannot read properties of undefined');
      database.pingCheck.mockRejectedValue(bug);
      await expect(service.ready()).rejects.toBe(bug);
    });
  });
});
