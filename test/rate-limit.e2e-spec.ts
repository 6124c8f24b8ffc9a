import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { CreateTokenInput, TokensService } from '../src/auth/tokens.service';
import { BODY_LIMIT_BYTES } from '../src/common/json/json-body.limits';
import { testDatabases } from './utils/databases';
import { watchStatements } from './utils/statements';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

const LIMIT = 3;
// A token cache longer than any test, so a token the instance has looked up stays known to it.
const LIMITED = { RATE_LIMIT_PER_MINUTE: String(LIMIT), TOKEN_CACHE_TTL_MS: '300000' };
const UNKNOWN_TOKEN = `pst_${'Z'.repeat(43)}`;
const POLICY = `"default";q=${LIMIT};w=60`;

/** A user id no other test uses: each has a fresh budget, whatever ran before in the same minute. */
const uniqueSubject = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** `"default";r=<remaining>;t=<seconds>` split into numbers. */
function rateLimitOf(res: request.Response): { remaining: number; reset: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(res.headers['ratelimit']));
  if (!match) throw new Error(`RateLimit header is ${JSON.stringify(res.headers['ratelimit'])}`);
  return { remaining: Number(match[1]), reset: Number(match[2]) };
}

/** A refusal: the Error body, Retry-After in whole seconds, and both RateLimit headers. */
function expectLimited(res: request.Response): void {
  expectErrorBody(res, 429);
  expect(res.body.message).toContain(`at most ${LIMIT} per minute`);
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers['ratelimit-policy']).toBe(POLICY);
  expect(rateLimitOf(res).remaining).toBe(0);
  expect(rateLimitOf(res).reset).toBeGreaterThan(0);
}

/** A made-up token of the right shape, different every time. */
const randomToken = () => `pst_${randomBytes(32).toString('base64url')}`;

/**
 * A token the instance has already looked up and found valid, as after its first request: the
 * rate limit counts it against its user without spending the address's budget.
 */
async function knownToken(t: TestApp, input: CreateTokenInput): Promise<string> {
  const secret = await t.token(input);
  await expect(t.app.get(TokensService).authenticate(secret)).resolves.not.toBeNull();
  return secret;
}

describe.each(testDatabases())('Rate limits on %s', (database) => {
  describe('per user', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp(database, LIMITED);
      await t.reset();
    });
    afterAll(() => t.close());

    const create = (token: string, id: number) =>
      t
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send(`{"id":${id},"name":"Fern"}`);
    const list = (token: string) => t.http().get('/plants').set(bearer(token));
    const remove = (token: string, id: number) => t.http().delete(`/plants/${id}`).set(bearer(token));
    const storedFor = async (subject: string): Promise<number> => {
      const rows: Array<{ n: number | string }> = await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM plants WHERE owner = ?',
        [subject],
      );
      return Number(rows[0].n);
    };

    it('gives a user one budget across routes and across their tokens', async () => {
      const subject = uniqueSubject('alice');
      const first = await knownToken(t, { subject });
      const second = await knownToken(t, { subject, scopes: ['plants:read', 'plants:write'], name: 'second' });

      const answers = [await create(first, 1), await list(second), await remove(first, 1)];
      expect(answers.map((res) => res.status)).toEqual([200, 200, 204]);
      expect(answers.map((res) => res.headers['ratelimit-policy'])).toEqual([POLICY, POLICY, POLICY]);
      expect(answers.map((res) => rateLimitOf(res).remaining)).toEqual([2, 1, 0]);

      expectLimited(await list(second));
      expectLimited(await create(first, 2));
      expectLimited(await remove(second, 1));
    });

    it('refuses before doing anything: a refused create stores nothing', async () => {
      const subject = uniqueSubject('eager');
      const token = await knownToken(t, { subject });
      for (let id = 1; id <= LIMIT; id += 1) expect((await create(token, id)).status).toBe(200);
      expectLimited(await create(token, 99));
      expect(await storedFor(subject)).toBe(LIMIT);
    });

    it('leaves another user unaffected', async () => {
      const busy = await knownToken(t, { subject: uniqueSubject('busy') });
      const other = await knownToken(t, { subject: uniqueSubject('other') });
      for (let i = 0; i < LIMIT; i += 1) expect((await list(busy)).status).toBe(200);
      expectLimited(await list(busy));

      const res = await list(other);
      expect(res.status).toBe(200);
      expect(rateLimitOf(res).remaining).toBe(LIMIT - 1);
    });

    it('limits calls without a valid token per client address, before authentication', async () => {
      // Nothing else in this app calls without a valid token, so this address has its whole budget.
      const anonymous = [
        await t.http().get('/plants'),
        await t.http().get('/plants').set(bearer(UNKNOWN_TOKEN)),
        await t.http().delete('/plants/1').set('Authorization', 'Basic YWxpY2U6c2VjcmV0'),
      ];
      expect(anonymous.map((res) => res.status)).toEqual([401, 401, 401]);
      expect(anonymous.map((res) => rateLimitOf(res).remaining)).toEqual([2, 1, 0]);

      // Past the budget, even an invalid token is answered 429, not 401: guessing tokens is limited.
      const guess = await t
        .http()
        .get('/plants')
        .set(bearer(`pst_${'Y'.repeat(43)}`));
      expectLimited(guess);
      expect(guess.headers['www-authenticate']).toBeUndefined();
      expectLimited(await t.http().post('/plants').set('Content-Type', 'application/json').send('{"id":1,"name":"x"}'));

      // A user the instance already knows, calling from the same address, has a budget of their own.
      const valid = await knownToken(t, { subject: uniqueSubject('valid') });
      const res = await list(valid);
      expect(res.status).toBe(200);
      expect(rateLimitOf(res).remaining).toBe(LIMIT - 1);
      // A token it has not looked up yet is refused with its address, before any lookup.
      expectLimited(await list(await t.token({ subject: uniqueSubject('cold') })));
    });

    it('reads "Bearer" followed by several spaces as the token, and counts it against its user', async () => {
      const token = await knownToken(t, { subject: uniqueSubject('spaces') });
      const res = await t.http().get('/plants').set('Authorization', `Bearer   ${token}`);
      expect(res.status).toBe(200);
      expect(rateLimitOf(res).remaining).toBe(LIMIT - 1);
      expect(rateLimitOf(await list(token)).remaining).toBe(LIMIT - 2);
    });
  });

  describe('per client address behind a trusted proxy (TRUST_PROXY=loopback)', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp(database, { ...LIMITED, TRUST_PROXY: 'loopback' });
    });
    afterAll(() => t.close());

    it('gives each X-Forwarded-For client its own budget', async () => {
      const from = (address: string) => t.http().get('/plants').set('X-Forwarded-For', address);
      for (let i = 0; i < LIMIT; i += 1) expect((await from('198.51.100.10')).status).toBe(401);
      expectLimited(await from('198.51.100.10'));

      const other = await from('198.51.100.11');
      expect(other.status).toBe(401);
      expect(rateLimitOf(other).remaining).toBe(LIMIT - 1);

      // The client is the address the trusted proxy saw, not what the client itself claimed.
      expectLimited(await from('203.0.113.99, 198.51.100.10'));
    });

    it('counts a revoked token against the address, never against its user', async () => {
      const subject = uniqueSubject('revoked');
      const kept = await knownToken(t, { subject });
      const revoked = await t.token({ subject });
      await t.app.get(TokensService).revoke(revoked);
      const fromRevoked = () => t.http().get('/plants').set(bearer(revoked)).set('X-Forwarded-For', '198.51.100.50');
      for (let i = 0; i < LIMIT; i += 1) expect((await fromRevoked()).status).toBe(401);
      expectLimited(await fromRevoked());

      const res = await t.http().get('/plants').set(bearer(kept)).set('X-Forwarded-For', '198.51.100.50');
      expect(res.status).toBe(200);
      expect(rateLimitOf(res).remaining).toBe(LIMIT - 1);
    });
  });

  describe('before routing, authentication and the body (TRUST_PROXY=loopback, one address per test)', () => {
    let t: TestApp;
    const statements: string[] = [];
    let stopWatching = () => {};
    let addresses = 0;
    /** An address no other test uses, so each test starts with its whole budget. */
    const freshAddress = () => `198.51.100.${100 + (addresses += 1)}`;

    beforeAll(async () => {
      t = await startTestApp(database, { ...LIMITED, TRUST_PROXY: 'loopback' });
      stopWatching = watchStatements(database, t, (sql) => statements.push(sql));
    });
    afterAll(() => {
      stopWatching();
      return t.close();
    });
    beforeEach(() => {
      statements.length = 0;
    });

    const exhaust = async (address: string) => {
      for (let i = 0; i < LIMIT; i += 1)
        expect((await t.http().get('/plants').set('X-Forwarded-For', address)).status).toBe(401);
    };

    it('refuses a limited address with 429 before any token lookup or body work: no SQL, no body read', async () => {
      const address = freshAddress();
      await exhaust(address);
      const real = await t.token({ subject: uniqueSubject('not-yet-known') });
      statements.length = 0;
      const post = (type: string, body: string) =>
        t.http().post('/plants').set(bearer(randomToken())).set('Content-Type', type).send(body);
      const withoutBody = [
        t.http().get('/plants').set(bearer(randomToken())),
        t.http().get('/plants').set(bearer(real)),
        t.http().delete('/plants/1').set(bearer(randomToken())),
      ];
      // Malformed, not JSON, over the cap: each would be refused by the body reader (400, 415, 413).
      const withBody = [
        post('application/json', '{"id": 1, "name":'),
        post('text/plain', 'not json'),
        post('application/json', `{"id":1,"name":"${'x'.repeat(BODY_LIMIT_BYTES)}"}`),
      ];
      for (const pending of withoutBody) expectLimited(await pending.set('X-Forwarded-For', address));
      for (const pending of withBody) expectLimited(await pending.set('X-Forwarded-For', address));
      expect(statements).toEqual([]);
    });

    it("counts a token's first request against its address too (it costs a lookup), then only against its user", async () => {
      const address = freshAddress();
      const token = await t.token({ subject: uniqueSubject('first') });
      const first = await t.http().get('/plants').set(bearer(token)).set('X-Forwarded-For', address);
      expect(first.status).toBe(200);
      expect(rateLimitOf(first).remaining).toBe(LIMIT - 1);
      const second = await t.http().get('/plants').set(bearer(token)).set('X-Forwarded-For', address);
      expect(rateLimitOf(second).remaining).toBe(LIMIT - 2);
      expect(rateLimitOf(await t.http().get('/plants').set('X-Forwarded-For', address)).remaining).toBe(LIMIT - 2);
    });

    it('limits unknown routes and methods like any call, with the RateLimit fields', async () => {
      const address = freshAddress();
      const calls = [
        () => t.http().get('/no/such/route'),
        () => t.http().put('/plants/1'),
        () => t.http().options('/nowhere'),
      ];
      for (const [i, call] of calls.entries()) {
        const res = await call().set('X-Forwarded-For', address);
        expectErrorBody(res, 404);
        expect(res.headers['ratelimit-policy']).toBe(POLICY);
        expect(rateLimitOf(res).remaining).toBe(LIMIT - 1 - i);
      }
      expectLimited(await t.http().get('/no/such/route').set('X-Forwarded-For', address));
    });

    it('limits the Swagger UI and the OpenAPI document too', async () => {
      const address = freshAddress();
      const page = await t.http().get('/docs').set('X-Forwarded-For', address);
      expect(page.status).toBe(200);
      expect(page.headers['ratelimit-policy']).toBe(POLICY);
      expect(rateLimitOf(page).remaining).toBe(LIMIT - 1);
      expect(rateLimitOf(await t.http().get('/docs-json').set('X-Forwarded-For', address)).remaining).toBe(LIMIT - 2);
      await t.http().get('/docs').set('X-Forwarded-For', address);
      expectLimited(await t.http().get('/docs').set('X-Forwarded-For', address));
    });

    it('never limits the health probes, nor gives them RateLimit fields', async () => {
      const address = freshAddress();
      await exhaust(address);
      expectLimited(await t.http().get('/plants').set('X-Forwarded-For', address));
      for (let i = 0; i < 2 * LIMIT; i += 1) {
        for (const probe of ['/health/live', '/health/ready']) {
          const res = await t.http().get(probe).set('X-Forwarded-For', address).set(bearer(randomToken()));
          expect({ probe, status: res.status }).toEqual({ probe, status: 200 });
          expect(res.headers['ratelimit']).toBeUndefined();
          expect(res.headers['ratelimit-policy']).toBeUndefined();
        }
      }
    });

    it('answers a call without a token and with a malformed body 401, not 400: authentication before the body', async () => {
      const res = await t
        .http()
        .post('/plants')
        .set('X-Forwarded-For', freshAddress())
        .set('Content-Type', 'application/json')
        .send('{"id": 1, "name":');
      expectErrorBody(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="plant-store"');
    });
  });

  describe('per client address without TRUST_PROXY', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp(database, LIMITED);
    });
    afterAll(() => t.close());

    it('ignores X-Forwarded-For: all callers from one address share its budget', async () => {
      const answers = [];
      for (let i = 0; i < LIMIT; i += 1) {
        answers.push(
          await t
            .http()
            .get('/plants')
            .set('X-Forwarded-For', `198.51.100.${20 + i}`),
        );
      }
      expect(answers.map((res) => res.status)).toEqual([401, 401, 401]);
      expect(answers.map((res) => rateLimitOf(res).remaining)).toEqual([2, 1, 0]);
      expectLimited(await t.http().get('/plants').set('X-Forwarded-For', '198.51.100.99'));
      expectLimited(await t.http().get('/plants'));
    });
  });
});
