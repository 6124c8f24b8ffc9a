import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { TokensService } from '../src/auth/tokens.service';
import { RateLimitStorage } from '../src/rate-limit/rate-limit.storage';
import { SentinelRig, sentinelCommand, startSentinelRig } from './utils/redis-sentinel';
import { TestApp, bearer, startTestApp } from './utils/test-app';

/**
 * Shared rate limits through Redis Sentinel (REDIS_URL=redis+sentinel://...): two instances count in
 * one Redis primary; when it is killed they go on answering, counting per instance, and share again
 * once Sentinel has promoted the replica, without a restart.
 *
 * It starts five server processes and waits for a failover, so it runs only with TEST_REDIS_SENTINEL=1;
 * TEST_REQUIRE_REDIS_SENTINEL=1 (set by CI) makes a skip a failure.
 */
function describeWithSentinel(): jest.Describe {
  const required = process.env.TEST_REQUIRE_REDIS_SENTINEL === '1';
  let reason: string | undefined;
  if (process.env.TEST_REDIS_SENTINEL !== '1') reason = 'TEST_REDIS_SENTINEL is not 1';
  else if (!sentinelCommand()) reason = 'redis-server is not installed (apt-get install redis-server redis-sentinel)';
  if (reason === undefined) return describe;
  if (required) throw new Error(`TEST_REQUIRE_REDIS_SENTINEL=1 but ${reason}`);
  console.warn(`Skipping the Redis Sentinel failover test: ${reason}`);
  return describe.skip;
}

const LIMIT = 4;
const FAILOVER_TIMEOUT_MS = 30_000;
const RECOVERY_TIMEOUT_MS = 20_000;

/** The `r=` of `RateLimit: "default";r=<remaining>;t=<seconds>`. */
function remaining(res: request.Response): number {
  const match = /^"default";r=(\d+);t=\d+$/.exec(String(res.headers['ratelimit']));
  if (!match) throw new Error(`RateLimit header is ${JSON.stringify(res.headers['ratelimit'])} (status ${res.status})`);
  return Number(match[1]);
}

describeWithSentinel()('Shared rate limits through Redis Sentinel', () => {
  let rig: SentinelRig | undefined;
  const apps: TestApp[] = [];
  let dataDir: string | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'plant-store-sentinel-e2e-'));
    rig = await startSentinelRig();
    // One database for both, as a deployment's instances have; the Redis behind Sentinel is the point.
    const env = {
      REDIS_URL: rig.url,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      // Lookups stay cached for the whole file, so no request falls back to the address budget.
      TOKEN_CACHE_TTL_MS: '300000',
      SQLITE_PATH: join(dataDir, 'shared.sqlite'),
    };
    apps.push(await startTestApp('sqlite', env), await startTestApp('sqlite', env));
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(apps.map((app) => app.close()));
    await rig?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * A token for a user of its own: a fresh budget, whatever ran before. Both instances look it up
   * first, so every request counts against the user (a token an instance has not looked up yet is
   * counted against the client address, docs/api.md "Rate limits").
   */
  const freshToken = async (label: string) => {
    const token = await apps[0].token({ subject: `${label}-${randomUUID().slice(0, 8)}` });
    await Promise.all(apps.map((t) => t.app.get(TokensService).authenticate(token)));
    return token;
  };
  const list = (instance: number, token: string) => apps[instance].http().get('/plants').set(bearer(token));

  /** Alternating between the instances, the budget runs down as one, and both then refuse. */
  async function expectSharedBudget(label: string): Promise<void> {
    const token = await freshToken(label);
    const seen: number[] = [];
    for (let i = 0; i < LIMIT; i += 1) {
      const res = await list(i % 2, token);
      expect(res.status).toBe(200);
      seen.push(remaining(res));
    }
    expect(seen).toEqual([3, 2, 1, 0]);
    expect((await list(0, token)).status).toBe(429);
    expect((await list(1, token)).status).toBe(429);
  }

  /**
   * Sends requests through both instances until every sentinel names a primary other than
   * `oldPrimary`: every one must be answered, none with a 5xx, none slowly.
   */
  async function serveUntilFailover(
    oldPrimary: number,
  ): Promise<{ failoverMs: number; slowest: number; countedApart: boolean }> {
    const sentinel = rig as SentinelRig;
    const storages = apps.map((app) => app.app.get(RateLimitStorage));
    const started = Date.now();
    const token = await freshToken('during');
    const statuses = new Set<number>();
    let slowest = 0;
    let countedApart = false;
    for (;;) {
      for (const instance of [0, 1]) {
        const sent = Date.now();
        const res = await list(instance, token);
        slowest = Math.max(slowest, Date.now() - sent);
        statuses.add(res.status);
        countedApart ||= storages.some((storage) => !storage.sharedInRedis);
      }
      const reported = await sentinel.reportedPrimaries();
      if (reported.every((port) => port !== undefined && port !== oldPrimary && port === reported[0])) break;
      if (Date.now() - started > FAILOVER_TIMEOUT_MS)
        throw new Error(`no failover within ${FAILOVER_TIMEOUT_MS} ms: ${reported}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...statuses].filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(statuses.has(200)).toBe(true);
    expect(slowest).toBeLessThan(1000);
    return { failoverMs: Date.now() - started, slowest, countedApart };
  }

  /** Polls, each time with a fresh user, until a count taken by one instance is seen by the other. */
  async function waitUntilSharedAgain(): Promise<void> {
    const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
    for (;;) {
      const probe = await freshToken('probe');
      const first = await list(0, probe);
      const second = await list(1, probe);
      expect([first.status, second.status]).toEqual([200, 200]);
      if (remaining(first) === LIMIT - 1 && remaining(second) === LIMIT - 2) break;
      if (Date.now() > deadline)
        throw new Error(`counting not shared again within ${RECOVERY_TIMEOUT_MS} ms of the failover`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(apps.map((app) => app.app.get(RateLimitStorage).sharedInRedis)).toEqual([true, true]);
    await expectSharedBudget('after');
  }

  it('follows a planned switchover, where the old primary stays up as a replica', async () => {
    const sentinel = rig as SentinelRig;
    await sentinel.waitForHealthy();
    await expectSharedBudget('before-switchover');

    const startedAt = Date.now();
    const oldPrimary = await sentinel.switchover();
    const { failoverMs, slowest } = await serveUntilFailover(oldPrimary);
    await waitUntilSharedAgain();
    console.log(
      `Sentinel switchover: every sentinel named the new primary after ${failoverMs} ms, ` +
        `counting shared again after ${Date.now() - startedAt} ms; slowest answer meanwhile ${slowest} ms`,
    );
    // The demoted primary serves as the replica for the next failover.
    await sentinel.waitForHealthy();
  }, 90_000);

  it('shares one budget, keeps answering while the primary is down, and shares again after the failover', async () => {
    const sentinel = rig as SentinelRig;
    await sentinel.waitForHealthy();
    expect(apps.map((app) => app.app.get(RateLimitStorage).sharedInRedis)).toEqual([true, true]);
    await expectSharedBudget('before');

    const oldPrimary = await sentinel.killPrimary();
    const killedAt = Date.now();
    const { failoverMs, slowest, countedApart } = await serveUntilFailover(oldPrimary);
    // Counted per instance meanwhile.
    expect(countedApart).toBe(true);

    // Without a restart, both instances find the new primary through the sentinels.
    await waitUntilSharedAgain();
    console.log(
      `Sentinel failover: primary killed, every sentinel named the new one after ${failoverMs} ms, ` +
        `counting shared again after ${Date.now() - killedAt} ms; slowest answer meanwhile ${slowest} ms`,
    );
  }, 90_000);
});
