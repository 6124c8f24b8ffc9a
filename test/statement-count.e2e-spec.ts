import { randomBytes } from 'node:crypto';
import { TokensService } from '../src/auth/tokens.service';
import { SET_SYNC_WAIT, isGaleraNode } from '../src/database/galera';
import { TOKEN_CACHE_MAX_ENTRIES } from '../src/auth/auth.limits';
import { testDatabases } from './utils/databases';
import { watchStatements } from './utils/statements';
import { TestApp, bearer, startTestApp } from './utils/test-app';

/**
 * The performance contract: in steady state each list, create and delete costs exactly one SQL
 * statement. No token lookup (cached), no BEGIN/COMMIT around a single insert, no SELECT before a
 * DELETE, no reload after an INSERT. Counted at the data source, so every statement is seen.
 */
describe.each(testDatabases())('SQL statements per request on %s', (database) => {
  let t: TestApp;
  let token: string;
  const statements: string[] = [];
  let lastParameters: unknown[] = [];
  let stopWatching = () => {};

  beforeAll(async () => {
    // A TTL longer than the suite, so a slow machine cannot turn steady state into a cache miss.
    t = await startTestApp(database, { TOKEN_CACHE_TTL_MS: '300000' });
    await t.reset();
    token = await t.token({ subject: 'counted' });
    // On a Galera node a session sets its causal wait again after a statement that failed (a
    // duplicate id, a key already taken: src/database/galera.ts). It is queued behind the failure
    // on the same connection, so no request waits for it; it is counted in galera.spec.ts, not here.
    const galera = await isGaleraNode(t.dataSource);
    stopWatching = watchStatements(database, t, (sql, parameters) => {
      if (galera && sql === SET_SYNC_WAIT) return;
      statements.push(sql);
      lastParameters = parameters;
    });
    // The first request looks the token up (and records its use); later ones are served from the cache.
    expect((await t.http().get('/plants').set(bearer(token))).status).toBe(200);
  });
  afterAll(() => {
    stopWatching();
    return t.close();
  });
  // Each test starts from no plants and creates the rows it counts on, so any one runs alone.
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM plants');
    await t.dataSource.query('DELETE FROM idempotency_keys');
    statements.length = 0;
  });

  const create = (id: number) =>
    t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send(`{"id":${id},"name":"Counted ${id}"}`);
  /** Plants with ids 1..count, created before the counting starts. */
  const seed = async (count: number) => {
    for (let id = 1; id <= count; id++) expect((await create(id)).status).toBe(200);
    statements.length = 0;
  };

  it('creates with one INSERT each', async () => {
    for (let id = 1; id <= 20; id++) expect((await create(id)).status).toBe(200);
    expect(statements).toHaveLength(20);
    expect(statements.every((sql) => /^INSERT INTO \S+ \([^)]+\) VALUES \(/i.test(sql))).toBe(true);
  });

  it('answers a duplicate create with one INSERT and nothing else', async () => {
    await seed(1);
    expect((await create(1)).status).toBe(409);
    expect(statements).toHaveLength(1);
  });

  it('creates with an Idempotency-Key in one INSERT of the key and one transaction; replays in two reads', async () => {
    const keyed = () => create(30).set('Idempotency-Key', 'counted-key');
    expect((await keyed()).status).toBe(200);
    const control = /^(SET TRANSACTION ISOLATION LEVEL|PRAGMA read_uncommitted|START TRANSACTION|BEGIN|COMMIT)/i;
    // Taking the key commits on its own (the lease others see); the plant and its stored answer commit
    // together, in a transaction at READ COMMITTED (its level set, then begun and committed).
    expect(statements.filter((sql) => control.test(sql))).toHaveLength(3);
    // Each statement by its verb and table, its identifiers unquoted (the plants' are quoted by TypeORM).
    const named = (sql: string) => sql.replace(/[`"]/g, '').replace(/ ?\(.*$|\s+SET.*$/s, '');
    expect(statements.filter((sql) => !control.test(sql)).map(named)).toEqual([
      'INSERT INTO idempotency_keys',
      'INSERT INTO plants',
      'UPDATE idempotency_keys',
    ]);
    statements.length = 0;
    const replay = await keyed();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/^INSERT INTO idempotency_keys/);
    expect(statements[1]).toMatch(/^SELECT .* FROM idempotency_keys/s);
  });

  it('lists a page with one SELECT each', async () => {
    await seed(10);
    for (let i = 0; i < 20; i++) expect((await t.http().get('/plants?limit=5').set(bearer(token))).status).toBe(200);
    expect((await t.http().get('/plants?limit=5&after=5').set(bearer(token))).status).toBe(200);
    expect(statements).toHaveLength(21);
    expect(statements.every((sql) => /^SELECT/i.test(sql))).toBe(true);
  });

  // The owner has no webhook subscription, which the instance knows from the subscription feed it
  // reads in the background: its changes are the plain statements, without the condition an
  // instance adds when it cannot be sure (docs/webhooks.md, "How an event is recorded").
  it('deletes with one DELETE each, a missing plant too', async () => {
    await seed(10);
    for (let id = 1; id <= 10; id++)
      expect((await t.http().delete(`/plants/${id}`).set(bearer(token))).status).toBe(204);
    expect(statements).toHaveLength(10);
    expect(statements.every((sql) => /^DELETE/i.test(sql))).toBe(true);
    statements.length = 0;
    expect((await t.http().delete('/plants/999').set(bearer(token))).status).toBe(404);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^DELETE FROM \S*plants\S* WHERE \S*owner\S* = \S+ AND \S*id\S* = \S+$/i);
  });

  it('never opens a transaction', async () => {
    await create(100);
    await t.http().get('/plants').set(bearer(token));
    await t.http().delete('/plants/100').set(bearer(token));
    expect(statements.filter((sql) => /^(START TRANSACTION|BEGIN|COMMIT|ROLLBACK)/i.test(sql))).toEqual([]);
    expect(statements).toHaveLength(3);
  });

  it('keeps a valid token cached through a flood of unknown tokens: no lookup for it afterwards', async () => {
    // More unknown tokens than the cache holds lookups, a batch at a time as concurrent requests would.
    const tokens = t.app.get(TokensService);
    const flood = TOKEN_CACHE_MAX_ENTRIES + 1;
    for (let sent = 0; sent < flood; sent += 200) {
      const batch = Array.from(
        { length: Math.min(200, flood - sent) },
        () => `pst_${randomBytes(32).toString('base64url')}`,
      );
      await expect(Promise.all(batch.map((secret) => tokens.authenticate(secret)))).resolves.toEqual(
        batch.map(() => null),
      );
    }
    statements.length = 0;
    expect((await t.http().get('/plants?limit=5').set(bearer(token))).status).toBe(200);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/FROM [`"]?plants/i);
  });

  (database === 'mysql' ? it : it.skip)("leaves mysql2's per-statement stack capture off", () => {
    const pool = (t.dataSource.driver as unknown as { pool: { config: { connectionConfig: { trace: boolean } } } })
      .pool;
    expect(pool.config.connectionConfig.trace).toBe(false);
  });

  (database === 'mysql' ? it : it.skip)(
    'reads a list page as a range of the primary key, with no filesort',
    async () => {
      for (let id = 1; id <= 50; id++) await create(1000 + id);
      statements.length = 0;
      expect((await t.http().get('/plants?limit=20&after=1010').set(bearer(token))).status).toBe(200);
      expect(statements).toHaveLength(1);
      const plan = (await t.dataSource.query(`EXPLAIN ${statements[0]}`, lastParameters)) as Record<string, unknown>[];
      expect(plan).toHaveLength(1);
      expect(plan[0]).toMatchObject({ table: expect.any(String), key: 'PRIMARY', type: 'range' });
      expect(String(plan[0].Extra ?? '')).not.toMatch(/filesort|temporary/i);
    },
  );
});
