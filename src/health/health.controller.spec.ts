import { ServiceUnavailableException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthIndicatorResult, TerminusModule, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { prepareGaleraSessions } from '../database/galera';
import { DATABASE_PING_TIMEOUT_MS, HealthController } from './health.controller';
import { ShutdownState } from './shutdown-state';

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
  let dataSource: { options: { type: string }; driver: object; query: jest.Mock };

  beforeEach(async () => {
    database = { pingCheck: jest.fn(async (key: string) => up(key)) };
    dataSource = { options: { type: 'mariadb' }, driver: {}, query: jest.fn() };
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController],
      providers: [ShutdownState, { provide: getDataSourceToken(), useValue: dataSource }],
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
        info: { lifecycle: { status: 'up' }, database: { status: 'up' } },
      });
      expect(database.pingCheck).toHaveBeenCalledWith('database', { timeout: DATABASE_PING_TIMEOUT_MS });
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

    it('on a Galera node, answers 503 while the node is not synced (joining, donor, non-primary)', async () => {
      dataSource.query.mockResolvedValueOnce([{ wsrep_on: 1 }]);
      await prepareGaleraSessions(dataSource as unknown as DataSource);
      const status = (ready: string, state: string) => [
        { Variable_name: 'wsrep_local_state', Value: state },
        { Variable_name: 'wsrep_ready', Value: ready },
      ];
      dataSource.query.mockResolvedValueOnce(status('ON', '4'));
      await expect(controller.ready()).resolves.toMatchObject({ info: { cluster: { status: 'up' } } });
      dataSource.query.mockResolvedValueOnce(status('OFF', '1'));
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
});

describe(ShutdownState.name, () => {
  it('starts serving, and turns to shutting down on begin() or before the application shuts down', () => {
    const direct = new ShutdownState();
    expect(direct.isShuttingDown).toBe(false);
    direct.begin();
    expect(direct.isShuttingDown).toBe(true);

    const hooked = new ShutdownState();
    hooked.beforeApplicationShutdown();
    expect(hooked.isShuttingDown).toBe(true);
  });
});
