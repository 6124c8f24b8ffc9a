import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import Redis from 'ioredis';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { AddressInfo, Socket, createServer } from 'node:net';
import { RateLimitStorage, createRedisClient, rateLimitRedisProvider } from '../src/rate-limit/rate-limit.storage';
import { TcpProxy } from './utils/tcp-proxy';
import { waitFor } from './utils/wait-for';

const LIMIT = 3;
const CLOSED_PORT_URL = 'redis://127.0.0.1:1';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const IN_CI = !!process.env.CI && process.env.CI !== 'false';

/** Whether a Redis server answers at REDIS_URL; decided before the suites are declared. */
function redisReachable(): boolean {
  const { hostname, port } = new URL(REDIS_URL);
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').connect(${Number(port || 6379)}, ${JSON.stringify(hostname)});
       s.setTimeout(1000, () => process.exit(1));
       s.on('connect', () => s.write('PING\\r\\n'));
       s.on('data', (d) => process.exit(String(d).startsWith('+PONG') || String(d).startsWith('-NOAUTH') ? 0 : 1));
       s.on('error', () => process.exit(1));`,
    ],
    { timeout: 5000 },
  );
  return probe.status === 0;
}

/** The real Redis suites are skipped only outside CI, when no Redis runs here; in CI they always run. */
const withRealRedis = IN_CI || redisReachable() ? describe : describe.skip;

async function storageFor(url: string | undefined): Promise<{ storage: RateLimitStorage; moduleRef: TestingModule }> {
  const settings: Record<string, unknown> = { 'rateLimit.redisUrl': url, 'rateLimit.perMinute': LIMIT };
  const moduleRef = await Test.createTestingModule({
    providers: [
      RateLimitStorage,
      rateLimitRedisProvider,
      { provide: ConfigService, useValue: { get: (key: string) => settings[key] } },
    ],
  }).compile();
  return { storage: moduleRef.get(RateLimitStorage), moduleRef };
}

/** The storage's own client, to wait for its connection (a spec may look inside). */
const clientOf = (storage: RateLimitStorage) => (storage as unknown as { redis?: Redis }).redis;

async function ready(storage: RateLimitStorage, timeoutMs = 5000): Promise<void> {
  const client = clientOf(storage) as Redis;
  if (client.status === 'ready') return;
  const signal = AbortSignal.timeout(timeoutMs);
  await once(client, 'ready', { signal }).catch((error: unknown) => {
    throw new Error(
      `Redis did not become ready (${(error as Error).message}, status ${client.status}); is it running?`,
    );
  });
}

/** Resolves once the client has scheduled a reconnect attempt, i.e. it is between attempts. */
function reconnectScheduled(client: Redis, timeoutMs = 5000): Promise<void> {
  // Not events.once: the connection errors the client emits meanwhile would reject it.
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reconnect attempt within ${timeoutMs} ms`)), timeoutMs);
    client.once('reconnecting', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * A server that speaks enough of Redis's protocol to pass ioredis's ready check and answers every
 * script as a demoted primary does: READONLY. Counts the connections made to it.
 */
async function startReadOnlyServer(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (;;) {
        const command = /^\*(\d+)\r\n/.exec(pending);
        if (!command) return;
        let at = command[0].length;
        const args: string[] = [];
        for (let i = 0; i < Number(command[1]); i += 1) {
          const header = /^\$(\d+)\r\n/.exec(pending.slice(at));
          if (!header || pending.length < at + header[0].length + Number(header[1]) + 2) return;
          at += header[0].length;
          args.push(pending.slice(at, at + Number(header[1])));
          at += Number(header[1]) + 2;
        }
        pending = pending.slice(at);
        const name = args[0].toUpperCase();
        if (name === 'INFO') {
          const info = '# Replication\r\nrole:master\r\nloading:0\r\n';
          socket.write(`$${info.length}\r\n${info}\r\n`);
        } else if (name === 'EVAL' || name === 'EVALSHA') {
          socket.write("-READONLY You can't write against a read only replica.\r\n");
        } else {
          socket.write('+OK\r\n');
        }
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One request counted against `key`, described as the assertions below read it. */
async function hit(storage: RateLimitStorage, key: string) {
  const count = await storage.consume(key);
  const seconds = Math.ceil(count.msBeforeNext / 1000);
  return {
    totalHits: count.consumed,
    isBlocked: count.refused,
    timeToExpire: seconds,
    timeToBlockExpire: count.refused ? seconds : 0,
  };
}

describe(RateLimitStorage.name, () => {
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;
  const modules: TestingModule[] = [];

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  // ioredis arms a timer of `disconnectTimeout` when a client whose socket is already gone is
  // disconnected, and nothing clears it; wait until the last one has run out so the run ends cleanly.
  let lastTimerRunsOutAt = 0;
  afterEach(async () => {
    const closing = modules.splice(0);
    await Promise.all(closing.map((moduleRef) => moduleRef.close()));
    for (const moduleRef of closing) {
      const client = clientOf(moduleRef.get(RateLimitStorage));
      if (client)
        lastTimerRunsOutAt = Math.max(lastTimerRunsOutAt, Date.now() + (client.options.disconnectTimeout ?? 2000));
    }
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    const left = lastTimerRunsOutAt - Date.now();
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left + 10));
  });

  /** A storage in a module of its own, closed after the test whatever happens (again, if the test closed it). */
  const openModule = async (url: string | undefined) => {
    const opened = await storageFor(url);
    modules.push(opened.moduleRef);
    return opened;
  };
  const open = async (url: string | undefined) => (await openModule(url)).storage;

  describe('without REDIS_URL', () => {
    it('counts in memory, blocking past the limit', async () => {
      const storage = await open(undefined);
      expect(storage.sharedInRedis).toBe(false);
      expect(clientOf(storage)).toBeUndefined();
      const key = `memory:${randomUUID()}`;
      const records = [];
      for (let i = 0; i < LIMIT + 1; i += 1) records.push(await hit(storage, key));
      expect(records.map((r) => [r.totalHits, r.isBlocked])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, true],
      ]);
      expect(records[0].timeToExpire).toBeGreaterThan(55);
      expect(records[0].timeToExpire).toBeLessThanOrEqual(60);
      expect(records[LIMIT].timeToBlockExpire).toBeGreaterThan(0);
      expect(warn).not.toHaveBeenCalled();
    });

    it('counts each key apart, and each instance apart', async () => {
      const first = await open(undefined);
      const second = await open(undefined);
      await hit(first, 'user:alice');
      await hit(first, 'user:alice');
      expect((await hit(first, 'user:bob')).totalHits).toBe(1);
      expect((await hit(second, 'user:alice')).totalHits).toBe(1);
    });

    it('shuts down cleanly', async () => {
      const { storage, moduleRef } = await openModule(undefined);
      await hit(storage, 'k');
      await expect(moduleRef.close()).resolves.toBeUndefined();
    });
  });

  describe('with REDIS_URL at a closed port', () => {
    it('still answers, from memory, and fast', async () => {
      const storage = await open(CLOSED_PORT_URL);
      const key = `closed:${randomUUID()}`;
      const started = Date.now();
      const records = [];
      for (let i = 0; i < LIMIT + 2; i += 1) records.push(await hit(storage, key));
      expect(Date.now() - started).toBeLessThan(1000);
      expect(records.slice(0, LIMIT).map((r) => r.totalHits)).toEqual([1, 2, 3]);
      expect(records.map((r) => r.isBlocked)).toEqual([false, false, false, true, true]);
      expect(storage.sharedInRedis).toBe(false);
    });

    it('stays fast while the client keeps retrying', async () => {
      const storage = await open(CLOSED_PORT_URL);
      await hit(storage, 'k');
      await reconnectScheduled(clientOf(storage) as Redis);
      await reconnectScheduled(clientOf(storage) as Redis);
      const started = Date.now();
      await hit(storage, 'k');
      expect(Date.now() - started).toBeLessThan(200);
    });

    it('logs one warning for the outage, not one per request', async () => {
      const storage = await open(CLOSED_PORT_URL);
      for (let i = 0; i < 10; i += 1) await hit(storage, `closed:${i}`);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(/Redis is unreachable/);
      expect(warn.mock.calls[0][0]).toMatch(/per instance/);
    });

    it('never rejects, however the client fails', async () => {
      const storage = await open(CLOSED_PORT_URL);
      await expect(Promise.all(Array.from({ length: 20 }, () => hit(storage, 'burst')))).resolves.toHaveLength(20);
    });

    it('shuts down quickly, and its client stops trying to reconnect', async () => {
      const { storage, moduleRef } = await openModule(CLOSED_PORT_URL);
      await hit(storage, 'k');
      const client = clientOf(storage) as Redis;
      await reconnectScheduled(client);
      const started = Date.now();
      await moduleRef.close();
      expect(Date.now() - started).toBeLessThan(1000);
      const attempts = jest.fn();
      client.on('reconnecting', attempts);
      client.on('connect', attempts);
      const statuses = new Set<string>();
      const watch = setInterval(() => statuses.add(client.status), 20);
      // Watching for a while is the test: longer than the retry delays the client has reached.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      clearInterval(watch);
      expect(attempts).not.toHaveBeenCalled();
      expect(statuses.has('connecting')).toBe(false);
    });
  });

  describe('with a Sentinel REDIS_URL', () => {
    it('gives ioredis the sentinels, the group and the Redis password, and asks for the primary', () => {
      const client = createRedisClient('redis+sentinel://:pw@127.0.0.1:1,127.0.0.1:2/mymaster/3?sentinelPassword=spw');
      client.on('error', () => undefined);
      try {
        expect(client.options).toMatchObject({
          sentinels: [
            { host: '127.0.0.1', port: 1 },
            { host: '127.0.0.1', port: 2 },
          ],
          name: 'mymaster',
          db: 3,
          password: 'pw',
          sentinelPassword: 'spw',
          role: 'master',
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
        });
      } finally {
        client.disconnect();
      }
    });

    it('answers from memory, fast, with one warning, while no sentinel answers', async () => {
      const storage = await open('redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster');
      const key = `sentinels-down:${randomUUID()}`;
      const started = Date.now();
      const records = [];
      for (let i = 0; i < LIMIT + 1; i += 1) records.push(await hit(storage, key));
      expect(Date.now() - started).toBeLessThan(1000);
      expect(records.map((r) => r.isBlocked)).toEqual([false, false, false, true]);
      expect(storage.sharedInRedis).toBe(false);
      expect(warn).toHaveBeenCalledTimes(1);
    });
  });

  describe('with a primary that was demoted to a replica', () => {
    let server: Awaited<ReturnType<typeof startReadOnlyServer>> | undefined;
    afterEach(async () => server?.close());

    it('counts READONLY as unavailable and reconnects, so Sentinel can name the new primary', async () => {
      server = await startReadOnlyServer();
      const storage = await open(server.url);
      await ready(storage);
      expect(server.connections()).toBe(1);

      const record = await hit(storage, `demoted:${randomUUID()}`);
      expect(record.totalHits).toBe(1);
      expect(storage.sharedInRedis).toBe(false);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(/Redis is unreachable \(READONLY/);
      const current = server;
      await waitFor(() => current.connections() > 1, { timeoutMs: 5000, what: 'a reconnection' });
    });
  });

  withRealRedis(`with a real Redis (${REDIS_URL})`, () => {
    it('shares counts between instances, for the same key only', async () => {
      const first = await open(REDIS_URL);
      const second = await open(REDIS_URL);
      await Promise.all([ready(first), ready(second)]);
      const key = `plantstore:test:${randomUUID()}`;
      const records = [await hit(first, key), await hit(second, key), await hit(first, key), await hit(second, key)];
      expect(records.map((r) => r.totalHits)).toEqual([1, 2, 3, 4]);
      expect(records.map((r) => r.isBlocked)).toEqual([false, false, false, true]);
      expect(records[0].timeToExpire).toBeGreaterThan(55);
      expect(records[3].timeToBlockExpire).toBeGreaterThan(0);
      expect((await hit(second, `${key}:other`)).totalHits).toBe(1);
      expect(first.sharedInRedis).toBe(true);
      expect(second.sharedInRedis).toBe(true);
      expect(warn).not.toHaveBeenCalled();
    });

    it('shuts down cleanly, ending its client', async () => {
      const { storage, moduleRef } = await openModule(REDIS_URL);
      await ready(storage);
      await hit(storage, `plantstore:test:${randomUUID()}`);
      const client = clientOf(storage) as Redis;
      await moduleRef.close();
      await waitFor(() => client.status === 'end', { timeoutMs: 2000, what: 'client ended' });
    });

    describe('through a link that fails and comes back', () => {
      const target = new URL(REDIS_URL);
      let proxy: TcpProxy;

      beforeEach(() => {
        proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
      });
      afterEach(() => proxy.cut());

      it('falls back to memory during each outage, logging one warning per outage and the recovery', async () => {
        const url = new URL(REDIS_URL);
        url.host = `127.0.0.1:${await proxy.start()}`;
        const storage = await open(url.toString());
        await ready(storage);
        const key = `plantstore:test:${randomUUID()}`;
        expect((await hit(storage, key)).totalHits).toBe(1);
        expect(storage.sharedInRedis).toBe(true);

        // First outage: answers from memory, fast, with one warning.
        await proxy.cut();
        for (let i = 0; i < 5; i += 1) {
          const started = Date.now();
          await hit(storage, key);
          expect(Date.now() - started).toBeLessThan(1000);
        }
        expect(storage.sharedInRedis).toBe(false);
        expect(warn).toHaveBeenCalledTimes(1);

        // Back: counts go to Redis again, and the recovery is logged.
        await proxy.restore();
        await waitFor(
          async () => {
            await hit(storage, key);
            return storage.sharedInRedis;
          },
          { what: 'counts shared in Redis again' },
        );
        expect(log.mock.calls.map(([message]) => String(message))).toContainEqual(
          expect.stringMatching(/reachable again/),
        );

        // Second outage: a second warning.
        await proxy.cut();
        await hit(storage, key);
        await hit(storage, key);
        expect(warn).toHaveBeenCalledTimes(2);
      });
    });
  });
});
