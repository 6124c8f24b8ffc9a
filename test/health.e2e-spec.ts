import { ShutdownState } from '../src/lifecycle/shutdown-state';
import { mysqlConnection, testDatabases } from './utils/databases';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RATE_LIMIT = 2;

describe.each(testDatabases())('Health probes on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(database, { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) });
  });
  afterAll(() => t.close());

  it('answers liveness 200 without a token', async () => {
    const res = await t.http().get('/health/live');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok', info: {} });
  });

  it('answers readiness 200 without a token, naming the database up', async () => {
    const res = await t.http().get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok', info: expect.objectContaining({ database: { status: 'up' } }) });
    for (const value of Object.values(res.body.info as Record<string, unknown>))
      expect(value).toEqual({ status: 'up' });
  });

  it('ignores a token, even an invalid one', async () => {
    const res = await t
      .http()
      .get('/health/ready')
      .set('Authorization', `Bearer pst_${'Z'.repeat(43)}`);
    expect(res.status).toBe(200);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('is never rate limited and carries no RateLimit headers', async () => {
    for (let i = 0; i < 10; i += 1) {
      for (const path of ['/health/live', '/health/ready']) {
        const res = await t.http().get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        expect(res.headers['ratelimit']).toBeUndefined();
        expect(res.headers['ratelimit-policy']).toBeUndefined();
        expect(res.headers['retry-after']).toBeUndefined();
      }
    }
    // The probes spent nothing of the address's budget: API calls from it are still counted from zero.
    const api = await t.http().get('/plants');
    expect(api.status).toBe(401);
    expect(api.headers['ratelimit']).toMatch(new RegExp(`^"default";r=${RATE_LIMIT - 1};t=\\d+$`));
  });

  it('carries X-Request-Id: the caller’s own, or a new UUID', async () => {
    const own = await t.http().get('/health/live').set('X-Request-Id', 'probe-7f3a');
    expect(own.headers['x-request-id']).toBe('probe-7f3a');
    const made = await t.http().get('/health/ready');
    expect(made.headers['x-request-id']).toMatch(UUID);
  });

  it('answers readiness 503 once shutdown has begun, while liveness stays 200', async () => {
    t.app.get(ShutdownState).begin();
    const ready = await t.http().get('/health/ready');
    expectErrorBody(ready, 503);
    expect(ready.body.message).toMatch(/shutting down/);
    expect(ready.body.message).not.toMatch(/database/);
    expect(ready.headers['x-request-id']).toMatch(UUID);

    const live = await t.http().get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok', info: {} });
  });
});

describe.each(testDatabases())('Readiness and answers without a usable schema on %s', (database) => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database);
    token = await t.token({ subject: 'alice', scopes: ['plants:read', 'plants:write'] });
  });
  afterAll(() => t.close());

  it('answers 503, and readiness 503 naming the schema, while the plants table is renamed; both recover once it is back', async () => {
    await t.http().get('/plants').set(bearer(token)).expect(200);
    await t.http().get('/health/ready').expect(200);

    await t.dataSource.query('ALTER TABLE plants RENAME TO plants_away');
    try {
      expectErrorBody(await t.http().get('/plants').set(bearer(token)), 503);
      expectErrorBody(await t.http().post('/plants').set(bearer(token)).send({ id: 1, name: 'Fern' }), 503);
      expectErrorBody(await t.http().delete('/plants/1').set(bearer(token)), 503);
      const ready = await t.http().get('/health/ready');
      expectErrorBody(ready, 503);
      expect(ready.body.message).toBe('Not ready: the database schema is missing tables or columns the service uses');
      // The process itself is fine: liveness must not get it restarted for a schema problem.
      await t.http().get('/health/live').expect(200);
    } finally {
      await t.dataSource.query('ALTER TABLE plants_away RENAME TO plants');
    }
    await t.http().get('/plants').set(bearer(token)).expect(200);
    await t.http().get('/health/ready').expect(200);
  });

  if (database === 'mysql') {
    it('answers 503, and readiness 503, once its database is dropped', async () => {
      const url = t.db.env.DATABASE_URL;
      const name = new URL(url).pathname.slice(1);
      const admin = await mysqlConnection(url, '');
      try {
        // Last in the file: the database is created anew by the next suite that needs it.
        await admin.query(`DROP DATABASE \`${name}\``);
      } finally {
        await admin.end();
      }
      expectErrorBody(await t.http().get('/plants').set(bearer(token)), 503);
      const ready = await t.http().get('/health/ready');
      expectErrorBody(ready, 503);
      expect(ready.body.message).toMatch(/^Not ready: /);
    });
  }
});
