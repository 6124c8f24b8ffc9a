import Redis from 'ioredis';
import { expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, exactJson, expectErrorBody, startTestApp } from './utils/test-app';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const onMysql = testDatabases().includes('mysql');

/**
 * How the service scales: stateless instances over one MySQL and one Redis. What one instance
 * writes the other reads, and a caller has one rate-limit budget whichever instance answers.
 */
(onMysql ? describe : describe.skip)('Two instances over one MySQL and one Redis', () => {
  const LIMIT = 6;
  let a: TestApp;
  let b: TestApp;
  let token: string;
  let subject: string;

  beforeAll(async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await redis.connect();
      await redis.ping();
    } catch {
      throw new Error(`These tests need Redis at ${REDIS_URL} (set TEST_REDIS_URL)`);
    } finally {
      redis.disconnect();
    }
    const env = { REDIS_URL, RATE_LIMIT_PER_MINUTE: String(LIMIT) };
    // Both start on the same database, as a deployment's instances do.
    [a, b] = [await startTestApp('mysql', env), await startTestApp('mysql', env)];
    await a.reset();
    // A subject of its own, so counts left in Redis by an earlier run cannot interfere.
    subject = `scale-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    token = await a.token({ subject });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('shares data and one rate-limit budget between the instances', async () => {
    const created = await a
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":9007199254740993,"name":"Shared"}');
    expect(created.status).toBe(200);
    expect(created.headers['ratelimit']).toBe(`"default";r=${LIMIT - 1};t=60`);

    const listed = await b.http().get('/plants').set(bearer(token));
    expect(listed.status).toBe(200);
    expect(exactJson(listed)).toEqual([expectedPlant({ id: 9007199254740993n, name: 'Shared' })]);
    expect(listed.headers['ratelimit']).toMatch(new RegExp(`^"default";r=${LIMIT - 2};t=\\d+$`));

    expect((await b.http().delete('/plants/9007199254740993').set(bearer(token))).status).toBe(204);
    expect((await a.http().get('/plants').set(bearer(token))).body).toEqual([]);
    expect((await b.http().get('/plants').set(bearer(token))).status).toBe(200);
    expect((await a.http().get('/plants').set(bearer(token))).headers['ratelimit']).toMatch(/^"default";r=0;t=\d+$/);

    // The budget of 6 is spent, 3 on each instance: both now refuse.
    for (const instance of [a, b]) {
      const refused = await instance.http().get('/plants').set(bearer(token));
      expectErrorBody(refused, 429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});
