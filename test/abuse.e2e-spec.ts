import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { BODY_LIMIT_BYTES as LIMIT } from '../src/common/json/json-body.limits';
import { Plant } from '../src/plants/plant.entity';
import { exactBody, expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { RawResponse, expectCleanError, listenOnLoopback, rawRequest, rawSocketExchange } from './utils/raw-http';
import { TestApp, bearer, startTestApp } from './utils/test-app';

const KIB = 1024;
const PROTO_NAMES = ['polluted', 'isAdmin', 'admin'];

/**
 * Hostile and malformed requests. Each must get a clean refusal (a 4xx with exactly the Error body,
 * never a 5xx, never a hang: every request here times out after 10 s) and must write nothing: the
 * store is compared row by row with its state before the request. Where Node's HTTP parser answers
 * before the application ever sees the request, the test says so and asserts what Node does.
 */
describe.each(testDatabases())('Abusive requests on %s', (database) => {
  let t: TestApp;
  let port: number;
  let token: string;
  let before: string[];

  beforeAll(async () => {
    t = await startTestApp(database);
    port = await listenOnLoopback(t.app);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'mallory' });
    const seeded = await post('{"id":1,"name":"Seed","tag":"first"}');
    expect(seeded.status).toBe(200);
    before = await snapshot();
    expect(before).toEqual(['mallory|1|"Seed"|"first"']);
  });
  afterEach(() => {
    // Whatever a request carried, no key may have reached Object.prototype.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    for (const name of PROTO_NAMES) expect(Object.prototype.hasOwnProperty.call(Object.prototype, name)).toBe(false);
  });

  /** Every row, exactly (ids as exact integers, text as stored). */
  async function snapshot(): Promise<string[]> {
    const rows = await t.dataSource.getRepository(Plant).find({ order: { owner: 'ASC', id: 'ASC' } });
    return rows.map((p) => `${p.owner}|${p.id}|${JSON.stringify(p.name)}|${JSON.stringify(p.tag)}`);
  }

  function post(body: Buffer | string, headers: Record<string, string> = {}, path = '/plants'): Promise<RawResponse> {
    return rawRequest(port, {
      method: 'POST',
      path,
      headers: { ...bearer(token), 'Content-Type': 'application/json', ...headers },
      body,
    });
  }

  const get = (path: string, headers: Record<string, string> = bearer(token)) => rawRequest(port, { path, headers });

  /** A clean 4xx with the Error body, and nothing written. */
  async function expectRefused(res: RawResponse, statuses: number[]): Promise<void> {
    expectCleanError(res, statuses);
    expect(await snapshot()).toEqual(before);
  }

  /** The app still answers normally (after Node itself refused a request and closed the connection). */
  async function expectStillServing(): Promise<void> {
    const res = await get('/plants');
    expect(res.status).toBe(200);
    expect(exactBody(res.text)).toEqual([expectedPlant({ id: 1n, name: 'Seed', tag: 'first' })]);
  }

  describe('bodies over the cap', () => {
    const padded = (bytes: number) => {
      const json = '{"id":2,"name":"x"}';
      return json + ' '.repeat(bytes - json.length);
    };

    it('answers 413 for one byte over the cap (Content-Length)', async () => {
      await expectRefused(await post(padded(LIMIT + 1)), [413]);
    });

    it('answers 413 for a 1 MiB body', async () => {
      await expectRefused(await post(padded(1024 * KIB)), [413]);
    });

    it('answers 413 for a chunked body over the cap (no Content-Length)', async () => {
      await expectRefused(await post(padded(LIMIT + 4 * KIB), { 'Transfer-Encoding': 'chunked' }), [413]);
    });

    it('answers 413 at once on a declared Content-Length over the cap, without waiting for the bytes', async () => {
      // Only 19 bytes of the declared 100 KiB are ever sent: an answer that waits for the rest never
      // comes (until Node's requestTimeout, 300 s by default), so 5 s without one counts as a hang.
      const res = await rawRequest(port, {
        method: 'POST',
        path: '/plants',
        headers: { ...bearer(token), 'Content-Type': 'application/json', 'Content-Length': String(100 * KIB) },
        body: '{"id":2,"name":"x"}',
        timeoutMs: 5_000,
      });
      await expectRefused(res, [413]);
    });

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
    ])(
      'counts the cap after %s decompression: a small compressed body that inflates over it is 413',
      async (encoding, compress) => {
        const body = compress(Buffer.from(padded(LIMIT + 1)));
        expect(body.length).toBeLessThan(KIB);
        await expectRefused(await post(body, { 'Content-Encoding': encoding }), [413]);
      },
    );

    it('answers 413 at once for a gzip bomb (10 MiB of spaces in ~10 KiB)', async () => {
      const bomb = gzipSync(Buffer.from(padded(10 * 1024 * KIB)), { level: 9 });
      expect(bomb.length).toBeLessThan(LIMIT);
      const started = Date.now();
      await expectRefused(await post(bomb, { 'Content-Encoding': 'gzip' }), [413]);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('accepts a gzip body that inflates to just under the cap (the encoding itself is supported)', async () => {
      const res = await post(gzipSync(Buffer.from(padded(LIMIT - 10))), { 'Content-Encoding': 'gzip' });
      expect(res.status).toBe(200);
      expect(exactBody(res.text)).toEqual(expectedPlant({ id: 2n, name: 'x' }));
    });

    it('answers 400 for a body that claims gzip but is not', async () => {
      await expectRefused(await post('{"id":2,"name":"x"}', { 'Content-Encoding': 'gzip' }), [400]);
    });

    it.each(['compress', 'zstd', 'x-unknown'])('answers 415 for the unsupported encoding %s', async (encoding) => {
      await expectRefused(await post(Buffer.from('irrelevant'), { 'Content-Encoding': encoding }), [415]);
    });

    it('applies the cap after brotli decompression too (br is decoded, though docs/api.md names gzip and deflate only)', async () => {
      const body = brotliCompressSync(Buffer.from(padded(LIMIT + 1)));
      expect(body.length).toBeLessThan(KIB);
      await expectRefused(await post(body, { 'Content-Encoding': 'br' }), [413]);
    });
  });

  describe('deep nesting', () => {
    it('answers 413 for 100k levels of [ (over the cap)', async () => {
      await expectRefused(await post('['.repeat(100_000)), [413]);
    });

    it('answers 413 for 100k levels of [ sent gzip-compressed (inflates over the cap)', async () => {
      const body = gzipSync(Buffer.from('['.repeat(100_000) + ']'.repeat(100_000)));
      expect(body.length).toBeLessThan(LIMIT);
      await expectRefused(await post(body, { 'Content-Encoding': 'gzip' }), [413]);
    });

    it.each([
      ['16k unclosed [', '['.repeat(16_000)],
      ['8k balanced arrays', '['.repeat(8_000) + ']'.repeat(8_000)],
      ['arrays 5k deep inside tag', `{"id":2,"name":"x","tag":${'['.repeat(5_000)}${']'.repeat(5_000)}}`],
      // Parse fine, but deeper than any object walk should go: ~2,700 levels of objects.
      ['objects 2,700 deep (16,201 bytes)', '{"a":'.repeat(2_700) + '1' + '}'.repeat(2_700)],
      [
        'objects and arrays 1,500 deep inside tag',
        `{"id":2,"name":"x","tag":${'[{"a":'.repeat(1_500)}1${'}]'.repeat(1_500)}}`,
      ],
      ['objects 2,000 deep inside name', `{"id":2,"name":${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}}`],
    ])('answers 400 for %s', async (_label, body) => {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LIMIT);
      await expectRefused(await post(body), [400]);
    });
  });

  describe('huge and odd numbers', () => {
    it.each([
      ['1e400', '1e400'],
      ['99999999999999999999999', '99999999999999999999999'],
      ['-99999999999999999999999', '-99999999999999999999999'],
      ['a 10,000-digit integer', '1' + '0'.repeat(10_000)],
      ['1e-400', '1e-400'],
      ['NaN', 'NaN'],
      ['Infinity', 'Infinity'],
      ['-Infinity', '-Infinity'],
      ['0x10', '0x10'],
      ['+1', '+1'],
      ['01', '01'],
      ['.5', '.5'],
    ])('answers 400 for the id %s', async (_label, literal) => {
      await expectRefused(await post(`{"id":${literal},"name":"x"}`), [400]);
    });

    it.each([
      ['name', '{"id":2,"name":1e400}'],
      ['tag', '{"id":2,"name":"x","tag":99999999999999999999999}'],
    ])('answers 400 for a huge number as %s', async (_label, body) => {
      await expectRefused(await post(body), [400]);
    });

    it('takes -0 as the JSON integer 0 (documented: any JSON integer literal), stored as 0', async () => {
      const res = await post('{"id":-0,"name":"zero"}');
      expect(res.status).toBe(200);
      expect(res.text).toContain('"id":0,');
      expect(exactBody(res.text)).toEqual(expectedPlant({ id: 0n, name: 'zero' }));
      expect(await snapshot()).toEqual(['mallory|0|"zero"|null', ...before]);
    });

    it.each([
      'limit=1e400',
      'limit=99999999999999999999999',
      'limit=-0',
      'limit=NaN',
      'after=99999999999999999999999',
      'after=1e400',
      'after=NaN',
    ])('answers 400 for ?%s', async (query) => {
      expectCleanError(await get(`/plants?${query}`), [400]);
    });

    it('answers 400 for DELETE of an id beyond int64, and deletes nothing', async () => {
      await expectRefused(
        await rawRequest(port, { method: 'DELETE', path: '/plants/99999999999999999999999', headers: bearer(token) }),
        [400],
      );
    });
  });

  describe('duplicate keys', () => {
    it.each([
      ['id twice with different values', '{"id":2,"id":3,"name":"x"}'],
      ['name twice with different values', '{"id":2,"name":"x","name":"y"}'],
      ['tag twice, once null', '{"id":2,"name":"x","tag":"a","tag":null}'],
      ['the seed id hidden behind a new one', '{"id":1,"name":"x","id":2}'],
    ])('answers 400 for %s', async (_label, body) => {
      await expectRefused(await post(body), [400]);
    });

    it('accepts a key repeated with the same value (documented: only different values are refused), storing one plant', async () => {
      const res = await post('{"id":2,"name":"x","id":2,"name":"x"}');
      expect(res.status).toBe(200);
      expect(exactBody(res.text)).toEqual(expectedPlant({ id: 2n, name: 'x' }));
      expect(await snapshot()).toEqual([...before, 'mallory|2|"x"|null']);
    });
  });

  describe('prototype-pollution keys', () => {
    it.each([
      ['__proto__ at the top', '{"id":2,"name":"x","__proto__":{"polluted":true}}'],
      ['__proto__ nested in a field', '{"id":2,"name":"x","tag":{"__proto__":{"polluted":true}}}'],
      ['__proto__ only', '{"__proto__":{"id":2,"name":"x"}}'],
      ['constructor.prototype', '{"id":2,"name":"x","constructor":{"prototype":{"polluted":true}}}'],
      ['prototype', '{"id":2,"name":"x","prototype":{"polluted":true}}'],
      ['constructor as a string', '{"id":2,"name":"x","constructor":"x"}'],
      ['valueOf', '{"id":2,"name":"x","valueOf":1}'],
      ['toString', '{"id":2,"name":"x","toString":"x"}'],
      ['hasOwnProperty', '{"id":2,"name":"x","hasOwnProperty":null}'],
      ['__defineGetter__', '{"id":2,"name":"x","__defineGetter__":{}}'],
      ['isPrototypeOf', '{"id":2,"name":"x","isPrototypeOf":[]}'],
    ])('answers 400 for %s in the body (an unknown field), writing nothing', async (_label, body) => {
      await expectRefused(await post(body), [400]);
    });

    it.each([
      '__proto__[polluted]=1',
      '__proto__.polluted=1',
      'constructor[prototype][polluted]=1',
      'constructor=1',
      'prototype=1',
      '__proto__=1',
      'toString=1',
      'valueOf=1',
    ])('answers 400 for ?%s', async (query) => {
      expectCleanError(await get(`/plants?${query}`), [400]);
    });
  });

  describe('NUL bytes', () => {
    it('answers 400 for a raw NUL byte inside a JSON string (control characters must be escaped)', async () => {
      await expectRefused(await post(Buffer.from('{"id":2,"name":"a\u0000b"}', 'utf8')), [400]);
    });

    it('answers 400 for a NUL byte after the JSON', async () => {
      await expectRefused(await post(Buffer.from('{"id":2,"name":"x"}\u0000', 'utf8')), [400]);
    });

    it('stores an escaped \\u0000 in a name as given (documented: text is stored as given)', async () => {
      const res = await post('{"id":2,"name":"a\\u0000b"}');
      expect(res.status).toBe(200);
      expect(await snapshot()).toEqual([...before, 'mallory|2|"a\\u0000b"|null']);
    });

    it.each([
      ['DELETE', '/plants/1%00', 400],
      ['DELETE', '/plants/%00', 400],
      ['DELETE', '/plants/%001', 400],
      ['GET', '/plants%00', 404],
      ['GET', '/%00', 404],
      ['GET', '/plants?limit=1%00', 400],
      ['GET', '/plants?after=%00', 400],
    ])('answers %s %s with a clean %s, deleting nothing', async (method, path, status) => {
      await expectRefused(await rawRequest(port, { method, path, headers: bearer(token) }), [status]);
    });

    it("a raw NUL byte in the request line is refused by Node's HTTP parser, with the Error body", async () => {
      // Node's parser (llhttp) rejects the request before Express exists for it; the service's
      // clientError handler answers 400 with the Error body and closes the connection.
      const res = await rawSocketExchange(
        port,
        Buffer.from(`DELETE /plants/1\u0000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`, 'latin1'),
      );
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/connection: close/i);
      expect(res.text).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      expect(JSON.parse(res.text.slice(res.text.indexOf('\r\n\r\n') + 4))).toEqual({
        error: 400,
        message: expect.any(String),
      });
      expect(await snapshot()).toEqual(before);
      await expectStillServing();
    });
  });

  describe('byte order mark and invalid UTF-8', () => {
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

    it('answers 400 for a UTF-8 BOM before the JSON (RFC 8259: not part of a JSON text)', async () => {
      await expectRefused(await post(bytes([0xef, 0xbb, 0xbf], '{"id":2,"name":"x"}')), [400]);
    });

    it.each([
      ['bytes that are never UTF-8 (FF FE)', [0xff, 0xfe]],
      ['an overlong encoding of "/" (C0 AF)', [0xc0, 0xaf]],
      ['a UTF-8-encoded lone surrogate U+D800 (ED A0 80)', [0xed, 0xa0, 0x80]],
      ['a code point above U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
      ['a truncated sequence (E2 82)', [0xe2, 0x82]],
      ['a lone continuation byte (80)', [0x80]],
    ])('answers 400 for %s in a name, storing nothing', async (_label, invalid) => {
      // docs/api.md: text that is not valid Unicode is refused, because it could not be stored as given.
      await expectRefused(await post(bytes('{"id":2,"name":"a', invalid, 'b"}')), [400]);
    });

    it('answers 400 for invalid UTF-8 in a key', async () => {
      await expectRefused(await post(bytes('{"id":2,"name":"x","', [0xc3], '":1}')), [400]);
    });

    it('answers 400 for invalid UTF-8 in a path id', async () => {
      await expectRefused(
        await rawRequest(port, { method: 'DELETE', path: '/plants/%FF', headers: bearer(token) }),
        [400],
      );
    });
  });

  describe('very long request targets and headers', () => {
    it('answers 404 for a 10k-character path', async () => {
      const res = await get(`/${'a'.repeat(10_000)}`);
      expectCleanError(res, [404]);
      // The message names the path but stays short.
      expect(res.text.length).toBeLessThan(1_000);
    });

    it('answers 400 for a 10k-digit id and a 10k-digit cursor', async () => {
      await expectRefused(
        await rawRequest(port, { method: 'DELETE', path: `/plants/${'9'.repeat(10_000)}`, headers: bearer(token) }),
        [400],
      );
      expectCleanError(await get(`/plants?after=${'1'.repeat(10_000)}`), [400]);
    });

    it("a 100k-character path is refused by Node's parser: 431 with the Error body, connection closed", async () => {
      // The request line counts toward Node's 16 KiB header limit (--max-http-header-size), so
      // Node's parser refuses it before the app sees anything (never 414); the service's
      // clientError handler answers. The app keeps serving.
      const res = await get(`/${'a'.repeat(100_000)}`);
      expectCleanError(res, [431]);
      expect(res.headers.connection).toBe('close');
      await expectStillServing();
    });

    it("a 20 KiB header is refused by Node's parser: 431 with the Error body, connection closed", async () => {
      const res = await get('/plants', { ...bearer(token), 'X-Padding': 'a'.repeat(20 * KIB) });
      expectCleanError(res, [431]);
      expect(res.headers.connection).toBe('close');
      await expectStillServing();
    });

    it('a 100k-character create path is refused by Node and writes nothing', async () => {
      await expectRefused(await post('{"id":2,"name":"x"}', {}, `/plants?${'x'.repeat(100_000)}`), [431]);
    });
  });

  describe('expectations', () => {
    it('answers an Expect other than 100-continue with 417 and the Error body, writing nothing', async () => {
      await expectRefused(await post('{"id":2,"name":"x"}', { Expect: 'teapot' }), [417]);
      await expectStillServing();
    });
  });

  describe('query arrays and objects', () => {
    it.each([
      'limit=1&limit=2',
      'limit[]=1',
      'limit[0]=1',
      'after[a]=1',
      'after=1&after=2',
      'after[]=1&limit=1',
      'limit=1,2',
    ])('answers 400 for ?%s', async (query) => {
      expectCleanError(await get(`/plants?${query}`), [400]);
    });
  });

  describe('wrong Content-Type', () => {
    const json = '{"id":2,"name":"x"}';

    it.each([
      ['text/plain', 'text/plain'],
      ['form encoded', 'application/x-www-form-urlencoded'],
      ['multipart', 'multipart/form-data; boundary=xyz'],
      ['XML', 'application/xml'],
      ['an unrelated json-ish type', 'application/jsonx'],
      ['octet-stream', 'application/octet-stream'],
      ['an unknown charset', 'application/json; charset=bogus'],
    ])('answers 415 for %s', async (_label, type) => {
      await expectRefused(await post(json, { 'Content-Type': type }), [415]);
    });

    it('answers 415 for a JSON body without any Content-Type', async () => {
      const res = await rawRequest(port, { method: 'POST', path: '/plants', headers: bearer(token), body: json });
      await expectRefused(res, [415]);
    });

    // docs/api.md: application/json with "a charset=utf-8 parameter ... accepted; anything else is
    // 415", and the 415 message itself says the body must be UTF-8 JSON (RFC 8259 §8.1).
    it.each([
      ['latin1', 'latin1', Buffer.from('{"id":2,"name":"caf\u00e9"}', 'latin1')],
      ['iso-8859-1', 'iso-8859-1', Buffer.from('{"id":2,"name":"x"}', 'latin1')],
      ['utf-16le', 'utf-16le', Buffer.from('{"id":2,"name":"x"}', 'utf16le')],
    ])('answers 415 for application/json; charset=%s', async (_label, charset, body) => {
      await expectRefused(await post(body, { 'Content-Type': `application/json; charset=${charset}` }), [415]);
    });

    it('answers 400 for a form body labelled as JSON', async () => {
      await expectRefused(await post('id=2&name=x'), [400]);
    });
  });

  describe('a token in the query string is never authentication', () => {
    const challenge = 'Bearer realm="plant-store"';

    it('GET /plants?access_token=<valid token> without a header is 401 with the bare challenge', async () => {
      const res = await get(`/plants?access_token=${token}`, {});
      expectCleanError(res, [401]);
      expect(res.headers['www-authenticate']).toBe(challenge);
    });

    it('POST with only a query token is 401 and writes nothing', async () => {
      const res = await rawRequest(port, {
        method: 'POST',
        path: `/plants?access_token=${token}`,
        headers: { 'Content-Type': 'application/json' },
        body: '{"id":2,"name":"x"}',
      });
      await expectRefused(res, [401]);
      expect(res.headers['www-authenticate']).toBe(challenge);
    });

    it('DELETE with only a query token is 401 and deletes nothing', async () => {
      const res = await rawRequest(port, { method: 'DELETE', path: `/plants/1?access_token=${token}` });
      await expectRefused(res, [401]);
    });

    it('a token in the body is not read either (401, nothing written)', async () => {
      const res = await rawRequest(port, {
        method: 'POST',
        path: '/plants',
        headers: { 'Content-Type': 'application/json' },
        body: `{"id":2,"name":"x","access_token":"${token}"}`,
      });
      await expectRefused(res, [401]);
    });

    it('GET with a valid header and an access_token parameter is 400 (unknown query parameter, not ignored)', async () => {
      expectCleanError(await get(`/plants?access_token=${token}`), [400]);
    });

    it('a query token of another user never switches identity', async () => {
      const other = await t.token({ subject: 'victim' });
      const res = await rawRequest(port, {
        method: 'DELETE',
        path: `/plants/1?access_token=${other}`,
        headers: { Authorization: 'Bearer pst_invalid' },
      });
      await expectRefused(res, [401]);
    });
  });
});
