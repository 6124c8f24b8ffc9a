import { AuthenticationRequired } from '../src/auth/auth.errors';
import { hashTokenSecret } from '../src/auth/token-secret';
import { TokensService } from '../src/auth/tokens.service';
import { testDatabases } from './utils/databases';
import { DOCUMENTED, bodyOf, pathOf } from './utils/operations';
import { listenOnLoopback, rawRequest } from './utils/raw-http';
import { appRoutes } from './utils/routes';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

const CHALLENGE = 'Bearer realm="plant-store"';
const INVALID = 'Bearer realm="plant-store", error="invalid_token"';

describe.each(testDatabases())('Authentication on %s', (database) => {
  let t: TestApp;
  let tokens: TokensService;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database);
    tokens = t.app.get(TokensService);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'alice' });
  });

  const call = (method: string, path: string, body?: string) => {
    const req = t.http()[method.toLowerCase() as 'get'](path);
    return body === undefined ? req : req.set('Content-Type', 'application/json').send(body);
  };
  /**
   * Every route of the application behind a token, from its router (those the OpenAPI document does
   * not show included), with a request it would take: a new route is held to the guard from the day
   * it is added.
   */
  const guarded = () =>
    appRoutes(t.app)
      .filter((route) => !route.isPublic)
      .map((route) => {
        const operation = DOCUMENTED.find(({ label }) => label === route.label);
        return {
          method: route.method,
          path: operation ? pathOf(operation) : route.path.replace(/\{[^}/]+\}/g, '1'),
          body: operation?.takesBody ? bodyOf(operation) : undefined,
        };
      });

  // Each route is protected; the rules of the header itself are the guard's and the strategy's
  // (bearer-auth.guard.spec.ts, bearer.strategy.spec.ts), shown end to end here on one route. A
  // token in the query string or the body is refused end to end in abuse.e2e-spec.ts.
  it('answers every route behind a token with 401 and a bare challenge without a token', async () => {
    const routes = guarded();
    expect(routes.length).toBeGreaterThan(0);
    const answers = [];
    for (const { method, path, body } of routes) {
      const res = await call(method, path, body);
      answers.push({ route: `${method} ${path}`, res: [res.status, res.headers['www-authenticate'], res.body] });
    }
    expect(answers).toEqual(
      routes.map(({ method, path }) => ({
        route: `${method} ${path}`,
        res: [401, CHALLENGE, { error: 401, message: new AuthenticationRequired().message }],
      })),
    );
  });

  it.each([
    ['an unknown token', () => 'pst_' + 'A'.repeat(43)],
    ['a malformed token', () => 'not-a-token'],
    ['an empty bearer', () => ''],
  ])('answers 401 invalid_token for %s', async (_label, make) => {
    const res = await t.http().get('/plants').set('Authorization', `Bearer ${make()}`.trimEnd());
    expectErrorBody(res, 401);
    expect(res.headers['www-authenticate']).toBe(INVALID);
  });

  it('does not take another scheme', async () => {
    const res = await t
      .http()
      .get('/plants')
      .set('Authorization', `Basic ${Buffer.from(`alice:${token}`).toString('base64')}`);
    expectErrorBody(res, 401);
    expect(res.headers['www-authenticate']).toBe(CHALLENGE);
  });

  it.each([2, 3])('accepts "Bearer" followed by %i spaces (RFC 6750: 1*SP)', async (spaces) => {
    const res = await t
      .http()
      .get('/plants')
      .set('Authorization', `Bearer${' '.repeat(spaces)}${token}`);
    expect(res.status).toBe(200);
  });

  it('answers two Authorization headers with 400, whether or not either token is valid, on every call', async () => {
    const port = await listenOnLoopback(t.app);
    const other = await t.token({ subject: 'bob' });
    for (const { method, path, body } of guarded()) {
      for (const pair of [
        [token, other],
        [token, token],
        [`pst_${'A'.repeat(43)}`, token],
      ]) {
        const res = await rawRequest(port, {
          method,
          path,
          headers: [
            ['Host', `127.0.0.1:${port}`],
            ['Authorization', `Bearer ${pair[0]}`],
            ['Authorization', `Bearer ${pair[1]}`],
            ['Content-Type', 'application/json'],
          ],
          body,
        });
        expect({ method, status: res.status }).toEqual({ method, status: 400 });
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(res.text)).toEqual({ error: 400, message: 'Send at most one Authorization header' });
      }
    }
    expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM plants'))[0].n)).toBe(0);
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'BeArEr'])('accepts the scheme written %s', async (scheme) => {
    const res = await t.http().get('/plants').set('Authorization', `${scheme} ${token}`);
    expect(res.status).toBe(200);
  });

  it('refuses an expired token from the moment it expires, even while its lookup is cached', async () => {
    const issued = await tokens.create({ subject: 'alice', expiresInMs: 1000 });
    expect((await t.http().get('/plants').set(bearer(issued.secret))).status).toBe(200);
    // Until the known instant of expiry has passed: a deadline, not a guessed pause.
    const expiresAt = issued.token.expiresAt!.getTime();
    while (Date.now() <= expiresAt) await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 1));
    const res = await t.http().get('/plants').set(bearer(issued.secret));
    expectErrorBody(res, 401);
    expect(res.headers['www-authenticate']).toBe(INVALID);
  });

  it('refuses a revoked token at once', async () => {
    expect((await t.http().get('/plants').set(bearer(token))).status).toBe(200);
    await tokens.revoke(token);
    const res = await t.http().get('/plants').set(bearer(token));
    expectErrorBody(res, 401);
    expect(res.headers['www-authenticate']).toBe(INVALID);
  });

  it('answers 403 insufficient_scope to a read-only token on create and delete', async () => {
    const reader = await t.token({ subject: 'alice', scopes: ['plants:read'] });
    expect((await t.http().get('/plants').set(bearer(reader))).status).toBe(200);
    for (const method of ['POST', 'DELETE'] as const) {
      const res = await (
        method === 'POST' ? call(method, '/plants', '{"id":1,"name":"x"}') : call(method, '/plants/1')
      ).set(bearer(reader));
      expectErrorBody(res, 403);
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="plant-store", error="insufficient_scope", scope="plants:write"',
      );
    }
  });

  it('answers 403 insufficient_scope to a write-only token on list', async () => {
    const writer = await t.token({ subject: 'alice', scopes: ['plants:write'] });
    expect((await call('POST', '/plants', '{"id":1,"name":"x"}').set(bearer(writer))).status).toBe(200);
    const res = await t.http().get('/plants').set(bearer(writer));
    expectErrorBody(res, 403);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="plant-store", error="insufficient_scope", scope="plants:read"',
    );
  });

  it('stores only the SHA-256 of a token, never the token itself', async () => {
    const rows: Record<string, unknown>[] = await t.dataSource.query('SELECT * FROM api_tokens');
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice(4));
    expect(rows[0].token_hash).toBe(hashTokenSecret(token));
  });

  it('records when a token was last used', async () => {
    const [before] = await tokens.list('alice');
    expect(before.lastUsedAt).toBeNull();
    await t.http().get('/plants').set(bearer(token));
    const [after] = await tokens.list('alice');
    expect(after.lastUsedAt).toBeInstanceOf(Date);
    expect(Math.abs(after.lastUsedAt!.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('keeps the Swagger UI and the OpenAPI document public', async () => {
    expect((await t.http().get('/docs-json')).status).toBe(200);
    const ui = await t.http().get('/docs/');
    expect(ui.status).toBe(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
  });
});
