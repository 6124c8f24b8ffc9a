import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { EventEmitter } from 'node:events';
import { RATE_LIMIT_WINDOW_MS } from './rate-limit.limits';
import { RATE_LIMIT_KEY_PREFIX, RATE_LIMIT_REDIS, RateLimitStorage } from './rate-limit.storage';

const LIMIT = 2;

/**
 * An ioredis client as rate-limiter-flexible uses it: the counting script it defines (INCRBY with
 * the window as expiry), and the MULTI that blocks a key. It fails every call while `failure` is set.
 */
class FakeRedis extends EventEmitter {
  status = 'ready';
  failure?: Error;
  readonly entries = new Map<string, { value: number; expiresAt: number }>();
  readonly calls: string[] = [];
  readonly quit = jest.fn(async () => {
    this.status = 'end';
    return 'OK';
  });
  readonly disconnect = jest.fn();

  defineCommand(name: string): void {
    Object.assign(this, {
      [name]: async ([key, points, seconds]: string[]) => {
        this.calls.push(name);
        if (this.failure) throw this.failure;
        const now = Date.now();
        const entry = this.entries.get(key);
        const live = entry && entry.expiresAt > now ? entry : { value: 0, expiresAt: now + Number(seconds) * 1000 };
        live.value += Number(points);
        this.entries.set(key, live);
        return [live.value, live.expiresAt - now];
      },
    });
  }

  multi() {
    const queued: Array<() => unknown> = [];
    const pipeline = {
      set: (key: string, value: number, _ex: 'EX', seconds: number) => {
        queued.push(() => this.entries.set(key, { value, expiresAt: Date.now() + seconds * 1000 }) && 'OK');
        return pipeline;
      },
      pttl: (key: string) => {
        queued.push(() => (this.entries.get(key)?.expiresAt ?? 0) - Date.now());
        return pipeline;
      },
      exec: async () => {
        this.calls.push('multi');
        if (this.failure) throw this.failure;
        return queued.map((run) => [null, run()]);
      },
    };
    return pipeline;
  }
}

async function storageWith(redis: FakeRedis | null): Promise<RateLimitStorage> {
  const settings: Record<string, unknown> = { 'rateLimit.perMinute': LIMIT };
  const moduleRef = await Test.createTestingModule({
    providers: [
      RateLimitStorage,
      { provide: RATE_LIMIT_REDIS, useValue: redis },
      { provide: ConfigService, useValue: { get: (key: string) => settings[key] } },
    ],
  }).compile();
  return moduleRef.get(RateLimitStorage);
}

describe(RateLimitStorage.name, () => {
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  describe('without Redis', () => {
    it('counts a window per key, and refuses past the limit for a whole window', async () => {
      const storage = await storageWith(null);
      const counts = [];
      for (let i = 0; i < LIMIT + 2; i += 1) counts.push(await storage.consume('default:user:alice'));
      expect(counts.map(({ consumed, remaining, refused }) => ({ consumed, remaining, refused }))).toEqual([
        { consumed: 1, remaining: 1, refused: false },
        { consumed: 2, remaining: 0, refused: false },
        { consumed: 3, remaining: 0, refused: true },
        { consumed: 4, remaining: 0, refused: true },
      ]);
      expect(counts[0].msBeforeNext).toBeGreaterThan(RATE_LIMIT_WINDOW_MS - 1000);
      expect(counts[0].msBeforeNext).toBeLessThanOrEqual(RATE_LIMIT_WINDOW_MS);
      // The first refusal blocks the key for a window from then.
      expect(counts[2].msBeforeNext).toBe(RATE_LIMIT_WINDOW_MS);
      expect((await storage.consume('default:user:bob')).consumed).toBe(1);
      expect(storage.sharedInRedis).toBe(false);
    });

    it('keeps refusing a key for a whole window from its first refusal, past the end of its window', async () => {
      jest.useFakeTimers({ now: 1_000_000 });
      try {
        const storage = await storageWith(null);
        for (let i = 0; i < LIMIT; i += 1) await storage.consume('default:user:alice');
        jest.advanceTimersByTime(30_000);
        await expect(storage.consume('default:user:alice')).resolves.toMatchObject({
          refused: true,
          msBeforeNext: RATE_LIMIT_WINDOW_MS,
        });
        // The window the key started in is over; the refusal is not.
        jest.advanceTimersByTime(RATE_LIMIT_WINDOW_MS - 30_000 + 1000);
        await expect(storage.consume('default:user:alice')).resolves.toMatchObject({
          refused: true,
          msBeforeNext: 29_000,
        });
        jest.advanceTimersByTime(29_000);
        await expect(storage.consume('default:user:alice')).resolves.toMatchObject({ consumed: 1, refused: false });
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('with Redis', () => {
    let redis: FakeRedis;
    beforeEach(() => (redis = new FakeRedis()));

    it('counts in Redis under the key prefix, with the window as the expiry', async () => {
      const storage = await storageWith(redis);
      const count = await storage.consume('default:user:alice');
      expect(count).toMatchObject({ consumed: 1, remaining: 1, refused: false });
      const entry = redis.entries.get(`${RATE_LIMIT_KEY_PREFIX}:default:user:alice`);
      expect(entry?.value).toBe(1);
      expect(entry!.expiresAt - Date.now()).toBeGreaterThan(RATE_LIMIT_WINDOW_MS - 1000);
      expect(storage.sharedInRedis).toBe(true);
    });

    it('blocks a key past the limit in Redis for a whole window, so every instance refuses it', async () => {
      const storage = await storageWith(redis);
      for (let i = 0; i < LIMIT; i += 1) await storage.consume('default:ip:192.0.2.1');
      const refused = await storage.consume('default:ip:192.0.2.1');
      expect(refused).toMatchObject({ consumed: LIMIT + 1, remaining: 0, refused: true });
      expect(refused.msBeforeNext).toBe(RATE_LIMIT_WINDOW_MS);
      expect(redis.calls).toContain('multi');
      const other = await storageWith(redis);
      await expect(other.consume('default:ip:192.0.2.1')).resolves.toMatchObject({ refused: true });
    });

    it('counts in memory while Redis fails, warning once, and in Redis again once it answers, saying so', async () => {
      const storage = await storageWith(redis);
      await storage.consume('default:user:alice');

      redis.failure = new Error('connect ECONNREFUSED 127.0.0.1:6379');
      const during = [];
      for (let i = 0; i < LIMIT + 1; i += 1) during.push(await storage.consume('default:user:alice'));
      // The memory's own count: it starts from nothing, and refuses past the limit too.
      expect(during.map(({ consumed, refused }) => ({ consumed, refused }))).toEqual([
        { consumed: 1, refused: false },
        { consumed: 2, refused: false },
        { consumed: 3, refused: true },
      ]);
      expect(storage.sharedInRedis).toBe(false);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toBe(
        'Redis is unreachable (connect ECONNREFUSED 127.0.0.1:6379); counting rate limits per instance until it returns',
      );

      redis.failure = undefined;
      await expect(storage.consume('default:user:alice')).resolves.toMatchObject({ consumed: 2, refused: false });
      expect(storage.sharedInRedis).toBe(true);
      expect(log.mock.calls.map(([message]) => message).filter((message) => /Redis/.test(message))).toEqual([
        'Redis is reachable again; rate limits are shared across instances',
      ]);

      redis.failure = new Error('Command timed out');
      await storage.consume('default:user:bob');
      expect(warn).toHaveBeenCalledTimes(2);
    });

    it('counts in memory without asking the client while it is not connected', async () => {
      const storage = await storageWith(redis);
      redis.status = 'reconnecting';
      await expect(storage.consume('default:user:alice')).resolves.toMatchObject({ consumed: 1, refused: false });
      expect(redis.calls).toEqual([]);
      expect(warn).toHaveBeenCalledTimes(1);
    });

    it('waits for the connection at start-up, and says so when it does not come', async () => {
      redis.status = 'connect';
      const storage = await storageWith(redis);
      setImmediate(() => {
        redis.status = 'ready';
        redis.emit('ready');
      });
      await storage.onModuleInit();
      expect(warn).not.toHaveBeenCalled();

      const late = new FakeRedis();
      late.status = 'connecting';
      const alone = await storageWith(late);
      await alone.onModuleInit();
      expect(alone.sharedInRedis).toBe(false);
      expect(warn.mock.calls.map(([message]) => message)).toEqual([
        'Redis is unreachable at start-up; counting rate limits per instance until it answers',
      ]);
    });

    it('ends its client on shutdown', async () => {
      const storage = await storageWith(redis);
      await storage.onApplicationShutdown();
      expect(redis.quit).toHaveBeenCalledTimes(1);
      await storage.onApplicationShutdown();
      expect(redis.quit).toHaveBeenCalledTimes(1);
    });
  });
});
