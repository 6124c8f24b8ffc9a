import { createHash } from 'node:crypto';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

/** Where a bearer token must never end up: the database, an answer, a URL the service writes. */
describe.each(testDatabases())('Token secrecy on %s', (database) => {
  let t: TestApp;
  let secret: string;

  beforeAll(async () => {
    t = await startTestApp(database);
    await t.reset();
    secret = await t.token({ subject: 'keeper', name: 'laptop' });
  });
  afterAll(() => t.close());

  it('stores only the SHA-256 of a token: no column of the token table holds the secret or part of it', async () => {
    const rows = (await t.dataSource.query('SELECT * FROM api_tokens')) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(secret.slice(4));
    expect(stored).not.toContain(secret.slice(4, 20));
    expect(rows[0].token_hash).toBe(createHash('sha256').update(secret).digest('hex'));
  });

  it('never repeats a token, right or wrong, in an answer', async () => {
    const wrong = `pst_${'Z'.repeat(43)}`;
    const answers = [
      await t.http().get('/plants').set(bearer(wrong)),
      await t.http().get('/plants').set('Authorization', `Basic ${secret}`),
      await t.http().get(`/plants?access_token=${secret}`),
      await t.http().get(`/plants/${secret}`).set(bearer(secret)),
      await t
        .http()
        .post('/plants')
        .set(bearer(secret))
        .set('Content-Type', 'application/json')
        .send(`{"id":1,"name":"${secret}","token":"${secret}"}`),
    ];
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const everything = JSON.stringify(res.headers) + res.text;
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(wrong);
    }
  });

  it('answers a path it cannot percent-decode without quoting the path', async () => {
    const res = await t.http().delete(`/plants/${secret}%zz`).set(bearer(secret));
    expectErrorBody(res, 400);
    expect(res.body.message).toBe('The path is not valid percent-encoding');
    expect(res.text).not.toContain(secret.slice(4, 24));
  });

  it('refuses a token in the query string or the body; only the Authorization header counts', async () => {
    const inQuery = await t.http().get(`/plants?access_token=${secret}`);
    expect([400, 401]).toContain(inQuery.status);
    expectErrorBody(inQuery, inQuery.status);

    const inBody = await t
      .http()
      .post('/plants')
      .set('Content-Type', 'application/json')
      .send(`{"access_token":"${secret}","id":2,"name":"Nope"}`);
    expectErrorBody(inBody, 401);
    expect((await t.http().get('/plants').set(bearer(secret))).body).toEqual([]);
  });

  it('writes no token into the URLs it hands out (paging links)', async () => {
    for (let id = 1; id <= 3; id++) {
      await t
        .http()
        .post('/plants')
        .set(bearer(secret))
        .set('Content-Type', 'application/json')
        .send(`{"id":${id},"name":"P${id}"}`);
    }
    const page = await t.http().get('/plants?limit=1').set(bearer(secret));
    expect(page.headers.link).toBe('<?limit=1&after=1>; rel="next"');
  });
});
