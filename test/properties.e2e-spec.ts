import fc from 'fast-check';
import { isInteger, parse, stringify } from 'lossless-json';
import { INT64_MAX, INT64_MIN } from '../src/common/int64';
import { textProblem } from '../src/common/validation/validators';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from '../src/plants/plants.limits';
import { INT32_MAX } from '../src/plants/plants.limits';
import { Plant } from '../src/plants/plant.entity';
import { expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { RawResponse, expectCleanError, listenOnLoopback, rawRequest } from './utils/raw-http';
import { TestApp, bearer, startTestApp } from './utils/test-app';

const MAX_PAGE = 25;
/** Each property stays well under ~20 s on either database. */
const RUNS = { numRuns: 200, interruptAfterTimeLimit: 20_000, markInterruptAsFailure: false } as const;
const TIMEOUT = 60_000;

interface PlantBody {
  id: bigint;
  name: string;
  tag?: string;
}

const exactInteger = (n: string) => (isInteger(n) ? BigInt(n) : Number(n));
/** JSON text as the service reads it: integers exact (BigInt), other numbers as numbers. */
const readExact = (text: string): unknown => parse(text, undefined, exactInteger);
const codePoints = (s: string) => [...s].length;

/** The text rule of IsText (src/common/validation/validators.ts): well-formed, min..max code points, not blank. */
const isText = (value: unknown, min: number, max: number) => textProblem(value, min, max) === null;

/**
 * The NewPlant rules, from the code that declares them (IsText's rule, the DTO's bounds): the
 * properties below check that the service holds every body to them, whatever the body holds.
 */
function validNewPlant(value: unknown): value is PlantBody & { tag?: string | null } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const body = value as Record<string, unknown>;
  if (!Object.keys(body).every((k) => k === 'id' || k === 'name' || k === 'tag')) return false;
  if (typeof body.id !== 'bigint' || body.id < INT64_MIN || body.id > INT64_MAX) return false;
  if (!isText(body.name, 1, PLANT_NAME_MAX_LENGTH)) return false;
  return body.tag === undefined || body.tag === null || isText(body.tag, 1, PLANT_TAG_MAX_LENGTH);
}

/**
 * How a decimal text in a path or query reads as an integer of [min, max]: `invalid` when it is not
 * digits (with an optional "-" when `signed`) or its value is out of range, the value when written
 * canonically ("7", "-7"), `ambiguous` for other digit forms ("007", "-0"), which the documents
 * leave open (read as the number, or refused).
 */
function readInteger(text: string, min: bigint, max: bigint, signed: boolean): bigint | 'invalid' | 'ambiguous' {
  if (!(signed ? /^-?\d+$/ : /^\d+$/).test(text)) return 'invalid';
  const value = BigInt(text);
  if (value < min || value > max) return 'invalid';
  return String(value) === text ? value : 'ambiguous';
}

/** Percent-encodes every byte of the UTF-8 form except unreserved characters (never throws, unlike encodeURIComponent on a lone surrogate). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

// ---- arbitraries ------------------------------------------------------------------------------

const int64 = fc.oneof(
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
  fc.constantFrom(INT64_MIN, INT64_MIN + 1n, -(2n ** 53n) - 1n, -1n, 0n, 1n, 2n ** 53n + 1n, INT64_MAX - 1n, INT64_MAX),
);
/** Text of exactly min..max code points of valid Unicode, not only whitespace. */
const text = (min: number, max: number) =>
  fc
    .oneof(
      fc.string({ unit: 'binary', minLength: min, maxLength: max }),
      fc.string({ unit: 'grapheme', minLength: min, maxLength: max }).filter((s) => codePoints(s) <= max),
      fc.string({ minLength: min, maxLength: max }),
      fc.constant('🌿'.repeat(max)),
      fc.constant(`x${'\u00a0'.repeat(max - 1)}`),
    )
    .filter((s) => isText(s, min, max));
const validPlant = fc.record(
  {
    id: int64,
    name: text(1, PLANT_NAME_MAX_LENGTH),
    tag: fc.oneof(text(1, PLANT_TAG_MAX_LENGTH), fc.constant(null)),
  },
  { requiredKeys: ['id', 'name'] },
);
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => `a${String.fromCharCode(c)}`);
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 300 }),
  loneSurrogate,
  fc.constantFrom('', ' ', '\t\n', 'x'.repeat(PLANT_NAME_MAX_LENGTH + 1), 't'.repeat(PLANT_TAG_MAX_LENGTH + 1)),
);
/** Almost-plants: every field sometimes right, sometimes wrong, sometimes missing, sometimes extra. */
const plantish = fc.record(
  {
    id: fc.oneof(
      int64,
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
      fc.integer(),
      fc.double(),
      anyText,
      fc.constant(null),
      fc.boolean(),
      fc.jsonValue(),
    ),
    name: fc.oneof(
      text(1, PLANT_NAME_MAX_LENGTH),
      anyText,
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
    ),
    tag: fc.oneof(
      text(1, PLANT_TAG_MAX_LENGTH),
      anyText,
      fc.constant(null),
      fc.integer(),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
    ),
    owner: fc.string(),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);
const jsonBody = fc.oneof(
  { weight: 3, arbitrary: plantish },
  { weight: 2, arbitrary: validPlant },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/problem+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/json; charset=bogus',
  '',
  '*/*',
  'application/*',
);

/** Valid plant JSON with a few bytes flipped, inserted or removed: near-miss syntax. */
const mutatedJson = fc
  .tuple(
    validPlant,
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete')), {
      minLength: 1,
      maxLength: 4,
    }),
  )
  .map(([plant, edits]) => {
    const bytes = [...Buffer.from(stringify(plant) as string, 'utf8')];
    for (const [at, byte, kind] of edits) {
      const i = at % (bytes.length + 1);
      if (kind === 'set') bytes[Math.min(i, bytes.length - 1)] = byte;
      else if (kind === 'insert') bytes.splice(i, 0, byte);
      else bytes.splice(Math.min(i, bytes.length - 1), 1);
    }
    return Buffer.from(bytes);
  });
const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }).map((a) => Buffer.from(a)),
  mutatedJson,
  fc.string({ unit: 'binary' }).map((s) => Buffer.from(s, 'utf8')),
);

const idText = fc.oneof(
  int64.map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.stringMatching(/^[-+0-9.eExX ]{0,30}$/),
  fc.constantFrom(
    '',
    '.',
    '..',
    '-0',
    '007',
    '+1',
    '1.0',
    '1e3',
    ' 1',
    '0x1',
    '9223372036854775808',
    '-9223372036854775809',
    '00000000000000000000000000001',
  ),
);
const queryValue = fc.oneof(
  fc.integer().map(String),
  fc.integer({ min: 0, max: INT32_MAX }).map(String),
  int64.map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    '0',
    '1',
    '2147483647',
    '2147483648',
    '-0',
    '00001',
    '1e3',
    ' 1',
    '1 ',
    '1.0',
    '0x10',
    '+1',
    '-1',
  ),
);

const segment = fc.oneof(
  fc.constantFrom(
    'plants',
    'PLANTS',
    'Plants',
    'docs',
    'docs-json',
    'health',
    'live',
    'ready',
    '',
    '.',
    '..',
    '%',
    '%zz',
    '%00',
    '%2F',
    '%2e%2e',
    '%E0%A4%A',
    '1',
    '-1',
    '9223372036854775808',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }).map(percentEncode),
  fc.stringMatching(/^[A-Za-z0-9\-._~!$&'()*+,;=:@]{1,12}$/),
);
const pathString = fc
  .tuple(
    fc.array(segment, { minLength: 0, maxLength: 5 }),
    fc.option(fc.string({ maxLength: 20 }).map(percentEncode), { nil: undefined }),
  )
  .map(([segments, query]) => `/${segments.join('/')}${query === undefined ? '' : `?${query}`}`);

/** Header values Node's client can send: HTAB, visible ASCII, space and obs-text (0x80-0xFF). */
const headerValue = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)), {
    maxLength: 200,
  })
  .map((codes) => String.fromCharCode(...codes));
const headerName = fc.constantFrom(
  'Authorization',
  'Content-Type',
  'Content-Encoding',
  'Accept',
  'Accept-Encoding',
  'Accept-Language',
  'Accept-Charset',
  'X-Request-Id',
  'X-Forwarded-For',
  'X-Forwarded-Proto',
  'X-Forwarded-Host',
  'Forwarded',
  'X-Real-IP',
  'Origin',
  'Cookie',
  'If-None-Match',
  'If-Modified-Since',
  'Range',
  'Referer',
  'User-Agent',
  'X-HTTP-Method-Override',
  'Access-Control-Request-Method',
  'Host',
);

// ---- the suite --------------------------------------------------------------------------------

describe.each(testDatabases())('Properties of the HTTP API on %s', (database) => {
  let t: TestApp;
  let port: number;
  let alice: string;

  beforeAll(async () => {
    t = await startTestApp(database, { PLANTS_MAX_PAGE: String(MAX_PAGE) });
    port = await listenOnLoopback(t.app);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    alice = await t.token({ subject: 'alice' });
  });

  /** Never a 5xx; every 4xx is exactly `{error: <status>, message}`; the status is one of `allowed`. */
  function expectClean(res: RawResponse, allowed: number[] | 'any', context: string): void {
    if (res.status >= 500 || (allowed !== 'any' && !allowed.includes(res.status))) {
      throw new Error(
        `${context}\n  answered ${res.status} (allowed: ${allowed === 'any' ? 'any below 500' : allowed.join(', ')}): ${JSON.stringify(res.text.slice(0, 300))}`,
      );
    }
    if (res.status >= 400) expectCleanError(res, [res.status]);
  }

  const post = (body: Buffer | string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
    rawRequest(port, { method: 'POST', path: '/plants', headers: { ...bearer(alice), ...headers }, body });

  /** The rows alice holds, read through SQL. */
  async function stored(): Promise<PlantBody[]> {
    const rows = await t.dataSource.getRepository(Plant).find({ where: { owner: 'alice' }, order: { id: 'ASC' } });
    return rows.map((p) => (p.tag === null ? { id: p.id, name: p.name } : { id: p.id, name: p.name, tag: p.tag }));
  }

  it(
    'POST /plants with any JSON body: 200 exactly for a valid plant (409 if held), else a clean 400',
    async () => {
      const held = new Map<bigint, PlantBody>();
      let accepted = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(jsonBody, async (body) => {
          const bytes = Buffer.from(stringify(body) as string, 'utf8');
          // The oracle reads what is actually sent (a lone surrogate is escaped by stringify, so it arrives).
          const sent = readExact(bytes.toString('utf8'));
          const res = await post(bytes);
          const context = `POST /plants ${bytes.toString('utf8').slice(0, 300)}`;
          if (!validNewPlant(sent)) {
            expectClean(res, [400], context);
            refused += 1;
            return;
          }
          if (held.has(sent.id)) {
            expectClean(res, [409], context);
            return;
          }
          expectClean(res, [200], context);
          const plant: PlantBody =
            sent.tag === undefined || sent.tag === null
              ? { id: sent.id, name: sent.name }
              : { id: sent.id, name: sent.name, tag: sent.tag };
          expect(readExact(res.text)).toEqual(expectedPlant(plant));
          held.set(plant.id, plant);
          accepted += 1;
        }),
        RUNS,
      );
      expect(accepted).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
      expect(await stored()).toEqual([...held.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
    },
    TIMEOUT,
  );

  it(
    'POST /plants with any bytes and any Content-Type: never a 5xx, a clean 4xx, and a 200 only for a plant that is then stored',
    async () => {
      await fc.assert(
        fc.asyncProperty(anyBytes, contentTypes, async (bytes, type) => {
          const res = await post(bytes, type === undefined ? {} : { 'Content-Type': type });
          const context = `POST /plants Content-Type ${JSON.stringify(type)} body ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`;
          expectClean(res, [200, 400, 409, 413, 415], context);
          if (res.status === 200) {
            const plant = readExact(res.text) as PlantBody;
            const row = (await stored()).find((p) => p.id === plant.id);
            expect(row).toBeDefined();
            expect(plant).toEqual(expectedPlant(row!));
          }
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'DELETE /plants/{any id}: 204 only for a held int64, 404 for another int64, a clean 400 otherwise',
    async () => {
      const held = new Set<bigint>([INT64_MIN, -1n, 0n, 7n, 2n ** 53n + 1n, INT64_MAX]);
      for (const id of held) expect((await post(`{"id":${id},"name":"seed"}`)).status).toBe(200);
      let deleted = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(idText, fc.constantFrom(...[...held].map(String))),
          fc.boolean(),
          async (id, encode) => {
            const raw = encode || !/^[A-Za-z0-9\-._~]*$/.test(id) ? percentEncode(id) : id;
            const res = await rawRequest(port, { method: 'DELETE', path: `/plants/${raw}`, headers: bearer(alice) });
            const context = `DELETE /plants/${raw}`;
            const read = readInteger(id, INT64_MIN, INT64_MAX, true);
            if (id === '') {
              // "/plants/" is the collection path, which has no DELETE: an unsupported method is 404.
              expectClean(res, [404], context);
            } else if (read === 'invalid') {
              expectClean(res, [400], context);
            } else if (read === 'ambiguous') {
              expectClean(res, [204, 400, 404], context);
            } else {
              expectClean(res, [held.has(read) ? 204 : 404], context);
            }
            if (res.status === 204) {
              expect(res.text).toBe('');
              const value = BigInt(id);
              expect(held.delete(value)).toBe(true);
              deleted += 1;
            }
          },
        ),
        RUNS,
      );
      expect(deleted).toBeGreaterThan(0);
      expect((await stored()).map((p) => p.id)).toEqual([...held].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    },
    TIMEOUT,
  );

  it(
    'GET /plants?limit&after with any values: 200 with the right page for valid ones, a clean 400 otherwise',
    async () => {
      const ids = [
        INT64_MIN,
        -(2n ** 53n) - 1n,
        -5n,
        0n,
        3n,
        9n,
        2n ** 53n + 1n,
        INT64_MAX - 1n,
        INT64_MAX,
        ...Array.from({ length: 30 }, (_, i) => BigInt(i * 1000 + 11)),
      ].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const id of ids) expect((await post(`{"id":${id},"name":"p${id}"}`)).status).toBe(200);
      let pages = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.option(queryValue, { nil: undefined }),
          fc.option(queryValue, { nil: undefined }),
          fc.boolean(),
          async (limit, after, limitFirst) => {
            const parts = [
              limit === undefined ? undefined : `limit=${percentEncode(limit)}`,
              after === undefined ? undefined : `after=${percentEncode(after)}`,
            ].filter((p) => p !== undefined);
            const path = `/plants${parts.length ? `?${(limitFirst ? parts : parts.reverse()).join('&')}` : ''}`;
            const res = await rawRequest(port, { path, headers: bearer(alice) });
            const limitRead = limit === undefined ? BigInt(MAX_PAGE) : readInteger(limit, 1n, BigInt(INT32_MAX), false);
            const afterRead = after === undefined ? INT64_MIN - 1n : readInteger(after, INT64_MIN, INT64_MAX, true);
            if (limitRead === 'invalid' || afterRead === 'invalid') return expectClean(res, [400], `GET ${path}`);
            if (limitRead === 'ambiguous' || afterRead === 'ambiguous')
              return expectClean(res, [200, 400], `GET ${path}`);
            const [limitValue, afterValue] = [limitRead, afterRead];
            expectClean(res, [200], `GET ${path}`);
            pages += 1;
            // The page is exactly the next min(limit, MAX_PAGE) ids after the cursor, with a Link iff more remain.
            const size = Number(limitValue < BigInt(MAX_PAGE) ? limitValue : BigInt(MAX_PAGE));
            const rest = ids.filter((id) => id > afterValue);
            const page = readExact(res.text) as PlantBody[];
            expect(page).toEqual(rest.slice(0, size).map((id) => expectedPlant({ id, name: `p${id}` })));
            if (rest.length > size)
              expect(res.headers.link).toBe(`<?limit=${size}&after=${rest[size - 1]}>; rel="next"`);
            else expect(res.headers.link).toBeUndefined();
          },
        ),
        RUNS,
      );
      expect(pages).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it(
    'any path and method: never a 5xx, and every 4xx is the Error body',
    async () => {
      const methods = fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS');
      await fc.assert(
        fc.asyncProperty(pathString, methods, fc.boolean(), async (path, method, withToken) => {
          const res = await rawRequest(port, {
            method,
            path,
            headers: {
              ...(withToken ? bearer(alice) : {}),
              ...(method === 'POST' ? { 'Content-Type': 'application/json' } : {}),
            },
            body: method === 'POST' ? '{"id":1,"name":"x"}' : undefined,
          });
          expectClean(res, 'any', `${method} ${path}`);
        }),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'any value in any request header: never a 5xx, and every 4xx is the Error body',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(fc.tuple(headerName, headerValue), { minLength: 1, maxLength: 4, selector: ([name]) => name }),
          fc.boolean(),
          fc.nat(),
          async (headers, isPost, n) => {
            const given = Object.fromEntries(headers);
            const res = await rawRequest(port, {
              method: isPost ? 'POST' : 'GET',
              path: '/plants',
              headers: { ...bearer(alice), ...(isPost ? { 'Content-Type': 'application/json' } : {}), ...given },
              body: isPost ? `{"id":${n},"name":"h"}` : undefined,
            });
            expectClean(res, 'any', `${isPost ? 'POST' : 'GET'} /plants with ${JSON.stringify(given)}`);
          },
        ),
        RUNS,
      );
    },
    TIMEOUT,
  );

  it(
    'any valid plant round-trips exactly through create and list (int64 ids over the whole range, Unicode text)',
    async () => {
      await fc.assert(
        fc.asyncProperty(validPlant, async (plant) => {
          const text = stringify(plant) as string;
          const expected: PlantBody =
            plant.tag === undefined || plant.tag === null
              ? { id: plant.id, name: plant.name }
              : { id: plant.id, name: plant.name, tag: plant.tag };
          const created = await post(text);
          expectClean(created, [200], `POST /plants ${text}`);
          // Exact text of the id, and the exact plant read without any double in between.
          expect(created.text.startsWith(`{"id":${plant.id},`)).toBe(true);
          expect(readExact(created.text)).toEqual(expectedPlant(expected));

          const query = plant.id === INT64_MIN ? '?limit=1' : `?limit=1&after=${plant.id - 1n}`;
          const listed = await rawRequest(port, { path: `/plants${query}`, headers: bearer(alice) });
          expectClean(listed, [200], `GET /plants${query}`);
          expect(listed.text.startsWith(`[{"id":${plant.id},`)).toBe(true);
          expect(readExact(listed.text)).toEqual([expectedPlant(expected)]);
          expect(listed.text).toBe(`[${created.text}]`);

          const removed = await rawRequest(port, {
            method: 'DELETE',
            path: `/plants/${plant.id}`,
            headers: bearer(alice),
          });
          expectClean(removed, [204], `DELETE /plants/${plant.id}`);
        }),
        { ...RUNS, numRuns: 150 },
      );
      expect(await stored()).toEqual([]);
    },
    TIMEOUT,
  );
});
