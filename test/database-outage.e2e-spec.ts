import { TcpProxy } from './utils/tcp-proxy';
import { prepareDatabase, testDatabases } from './utils/databases';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { expectedPlant } from './utils/bodies';

const onMysql = testDatabases().includes('mysql');

/**
 * A MySQL server that becomes unreachable while the service runs: answers are 503 with the Error
 * body, quickly, and the service recovers by itself once the server is back. (SQLite is embedded:
 * it has no link to lose.)
 */
(onMysql ? describe : describe.skip)('Database outage on mysql', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    const db = await prepareDatabase('mysql');
    const target = new URL(db.env.DATABASE_URL);
    proxy = new TcpProxy(target.hostname, Number(target.port || 3306));
    target.host = `127.0.0.1:${await proxy.start()}`;
    t = await startTestApp('mysql', {
      DATABASE_URL: target.toString(),
      DB_CONNECT_TIMEOUT_MS: '2000',
      DB_QUERY_TIMEOUT_MS: '1500',
      TOKEN_CACHE_TTL_MS: '0',
    });
    await t.reset();
    token = await t.token({ subject: 'outage' });
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.cut();
  });

  it('answers 503 while the database is unreachable and recovers without a restart', async () => {
    const created = await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":1,"name":"Survivor"}');
    expect(created.status).toBe(200);

    await proxy.cut();
    const started = Date.now();
    const during = await t.http().get('/plants').set(bearer(token));
    expectErrorBody(during, 503);
    expect(during.body.message).toBe('The database is unavailable; try again shortly');
    expect(Date.now() - started).toBeLessThan(10_000);

    const write = await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":2,"name":"Lost?"}');
    expectErrorBody(write, 503);

    const readiness = await t.http().get('/health/ready');
    expectErrorBody(readiness, 503);
    expect(readiness.body.message).toBe('Not ready: database is down');
    expect((await t.http().get('/health/live')).status).toBe(200);

    await proxy.restore();
    expect((await t.http().get('/health/ready')).status).toBe(200);
    const after = await t.http().get('/plants').set(bearer(token));
    expect(after.status).toBe(200);
    expect(after.body).toEqual([expectedPlant({ id: 1, name: 'Survivor' })]);
  });

  it('answers 503 within the query timeout when the link goes silent, never hanging, and recovers', async () => {
    const seeded = await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":10,"name":"Before the silence"}');
    expect(seeded.status).toBe(200);

    proxy.blackhole();
    const started = Date.now();
    const answers = await Promise.all([
      t.http().get('/plants').set(bearer(token)),
      t
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send('{"id":11,"name":"Unanswered"}'),
      t.http().get('/health/ready'),
    ]);
    const elapsed = Date.now() - started;
    for (const res of answers) expectErrorBody(res, 503);
    // Query timeout 1.5 s, connect timeout 2 s: well within 10 s, whatever the pool was doing.
    expect(elapsed).toBeLessThan(10_000);
    expect(answers[2].body.message).toBe('Not ready: database is down');

    await proxy.restore();
    let after = await t.http().get('/plants').set(bearer(token));
    await waitFor(
      async () => {
        if (after.status !== 200) after = await t.http().get('/plants').set(bearer(token));
        return after.status === 200;
      },
      { timeoutMs: 5000, intervalMs: 250, what: 'the service answering again' },
    );
    expect(after.body).toEqual(expect.arrayContaining([expectedPlant({ id: 10, name: 'Before the silence' })]));
    // The write that timed out was either never applied or applied whole; nothing in between.
    expect(after.body.filter((p: { id: number }) => p.id === 11).length).toBeLessThanOrEqual(1);
  });
});
