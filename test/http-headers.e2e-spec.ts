import request from 'supertest';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const APP_ORIGIN = 'https://app.example.com';
const OTHER_ORIGIN = 'https://evil.example.net';

/** The directives of a Content-Security-Policy header, by name. */
function cspOf(res: request.Response): Record<string, string[]> {
  const header = res.headers['content-security-policy'];
  expect(header).toEqual(expect.any(String));
  return Object.fromEntries(
    String(header)
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name, values]),
  );
}

function expectSecurityHeaders(res: request.Response): void {
  const csp = cspOf(res);
  expect(csp['script-src']).toEqual(["'self'"]);
  expect(csp['frame-ancestors']).toEqual(["'none'"]);
  expect(csp['default-src']).toEqual(["'self'"]);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-powered-by']).toBeUndefined();
}

const exposedHeadersOf = (res: request.Response) =>
  String(res.headers['access-control-expose-headers'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);

/** Answers of each kind: success, client errors, a body refused before routing, an unknown route. */
const ANSWERS: Array<[string, number, (t: TestApp, token: string) => request.Test]> = [
  ['a 200 list', 200, (t, token) => t.http().get('/plants').set(bearer(token))],
  ['a 401 without a token', 401, (t) => t.http().get('/plants')],
  ['a 400 invalid id', 400, (t, token) => t.http().delete('/plants/abc').set(bearer(token))],
  [
    'a 415 refused body',
    415,
    (t, token) => t.http().post('/plants').set(bearer(token)).set('Content-Type', 'text/plain').send('x'),
  ],
  ['an unknown-route 404', 404, (t) => t.http().get('/no/such/route')],
];

/** Headers apply to every database alike: these run on SQLite only. */
describe('HTTP headers on sqlite', () => {
  describe('security headers and request ids', () => {
    let t: TestApp;
    let token: string;

    beforeAll(async () => {
      t = await startTestApp('sqlite');
      await t.reset();
      token = await t.token({ subject: 'headers' });
    });
    afterAll(() => t.close());

    it('sends no ETag and answers a conditional list in full', async () => {
      const first = await t.http().get('/plants').set(bearer(token));
      expect(first.status).toBe(200);
      expect(first.headers.etag).toBeUndefined();
      for (const condition of [
        { 'If-None-Match': '*' },
        { 'If-Modified-Since': new Date(Date.now() + 60_000).toUTCString() },
      ]) {
        const res = await t.http().get('/plants').set(bearer(token)).set(condition);
        expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: [] });
      }
    });

    it.each(ANSWERS)('sets the helmet headers on %s', async (_label, status, send) => {
      const res = await send(t, token);
      expect(res.status).toBe(status);
      expectSecurityHeaders(res);
    });

    it('sets them on the Swagger UI and its JSON document too', async () => {
      const page = await t.http().get('/docs');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expectSecurityHeaders(page);
      const json = await t.http().get('/docs-json');
      expect(json.status).toBe(200);
      expectSecurityHeaders(json);
    });

    it.each(ANSWERS)('echoes a valid X-Request-Id on %s', async (_label, status, send) => {
      const id = `client-${status}-2f0c:trace/ok`;
      const res = await send(t, token).set('X-Request-Id', id);
      expect(res.status).toBe(status);
      expect(res.headers['x-request-id']).toBe(id);
    });

    it.each(ANSWERS)('makes a UUID when X-Request-Id is absent, on %s', async (_label, status, send) => {
      const res = await send(t, token);
      expect(res.status).toBe(status);
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it.each([
      ['200 characters', 'r'.repeat(200)],
      ['129 characters', 'r'.repeat(129)],
      ['a space in it', 'two words'],
      ['non-ASCII', 'naïve-id'],
    ])('replaces an X-Request-Id with %s by a UUID', async (_label, id) => {
      for (const send of [
        () => t.http().get('/plants').set(bearer(token)),
        () => t.http().get('/plants'),
        () => t.http().get('/nowhere'),
      ]) {
        const res = await send().set('X-Request-Id', id);
        expect(res.headers['x-request-id']).toMatch(UUID);
      }
    });

    it('accepts an X-Request-Id of exactly 128 characters', async () => {
      const id = 'q'.repeat(128);
      expect((await t.http().get('/plants').set(bearer(token)).set('X-Request-Id', id)).headers['x-request-id']).toBe(
        id,
      );
    });

    it('makes a different id for each request', async () => {
      const first = await t.http().get('/plants').set(bearer(token));
      const second = await t.http().get('/plants').set(bearer(token));
      expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    });

    it('keeps the unknown-route 404 an Error body', async () => {
      expectErrorBody(await t.http().get('/no/such/route'), 404);
    });
  });

  describe('CORS without CORS_ORIGINS', () => {
    let t: TestApp;
    let token: string;

    beforeAll(async () => {
      t = await startTestApp('sqlite');
      token = await t.token({ subject: 'no-cors' });
    });
    afterAll(() => t.close());

    it('gives a preflight no Access-Control-Allow-Origin', async () => {
      const res = await t
        .http()
        .options('/plants')
        .set('Origin', APP_ORIGIN)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-methods']).toBeUndefined();
    });

    it('gives a cross-origin call no Access-Control-Allow-Origin', async () => {
      const res = await t.http().get('/plants').set(bearer(token)).set('Origin', APP_ORIGIN);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-expose-headers']).toBeUndefined();
    });
  });

  describe(`CORS with CORS_ORIGINS=${APP_ORIGIN}`, () => {
    let t: TestApp;
    let token: string;

    beforeAll(async () => {
      t = await startTestApp('sqlite', { CORS_ORIGINS: APP_ORIGIN });
      token = await t.token({ subject: 'cors' });
    });
    afterAll(() => t.close());

    const preflight = (origin: string, method = 'DELETE') =>
      t
        .http()
        .options('/plants/1')
        .set('Origin', origin)
        .set('Access-Control-Request-Method', method)
        .set('Access-Control-Request-Headers', 'authorization,content-type,x-request-id');

    it('answers a preflight from the allowed origin', async () => {
      const res = await preflight(APP_ORIGIN);
      expect(res.status).toBeLessThan(300);
      expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expect(String(res.headers['access-control-allow-methods']).split(',')).toEqual(
        expect.arrayContaining(['GET', 'POST', 'DELETE']),
      );
      expect(String(res.headers['access-control-allow-headers']).toLowerCase().split(',')).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'x-request-id', 'idempotency-key']),
      );
    });

    it('lets the allowed origin read the answer and its RateLimit, Retry-After, Link and X-Request-Id headers', async () => {
      const res = await t.http().get('/plants').set(bearer(token)).set('Origin', APP_ORIGIN);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expect(exposedHeadersOf(res)).toEqual(
        expect.arrayContaining([
          'ratelimit',
          'ratelimit-policy',
          'retry-after',
          'link',
          'x-request-id',
          'www-authenticate',
        ]),
      );
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('lets the allowed origin read error answers too', async () => {
      const res = await t.http().get('/plants').set('Origin', APP_ORIGIN);
      expect(res.status).toBe(401);
      expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      expect(exposedHeadersOf(res)).toContain('www-authenticate');
    });

    it('gives another origin no Access-Control-Allow-Origin, on a preflight or a call', async () => {
      const pre = await preflight(OTHER_ORIGIN);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      const res = await t.http().get('/plants').set(bearer(token)).set('Origin', OTHER_ORIGIN);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('answers a preflight for a path the API does not have 404 with the Error body, like any unknown route', async () => {
      for (const path of ['/no/such/route', '/plants/1/extra', '/', '/docs-nothing']) {
        const res = await t
          .http()
          .options(path)
          .set('Origin', APP_ORIGIN)
          .set('Access-Control-Request-Method', 'GET')
          .set('Access-Control-Request-Headers', 'authorization');
        expectErrorBody(res, 404);
        expect(res.headers['access-control-allow-methods']).toBeUndefined();
      }
    });

    it('answers preflights for every route of the API, whatever the case or a trailing slash', async () => {
      for (const path of ['/plants', '/plants/', '/Plants/42', '/health/live', '/health/ready']) {
        const res = await t.http().options(path).set('Origin', APP_ORIGIN).set('Access-Control-Request-Method', 'GET');
        expect({ path, status: res.status }).toEqual({ path, status: 204 });
        expect(res.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
      }
    });

    it('never echoes a look-alike origin', async () => {
      for (const origin of [
        `${APP_ORIGIN}.evil.net`,
        'http://app.example.com',
        'https://app.example.com:8443',
        'null',
      ]) {
        const res = await t.http().get('/plants').set(bearer(token)).set('Origin', origin);
        expect({ origin, allowed: res.headers['access-control-allow-origin'] }).toEqual({ origin, allowed: undefined });
      }
    });
  });
});
