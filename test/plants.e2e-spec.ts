import { parse, parseNumberAndBigInt } from 'lossless-json';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { BodyTooLarge } from '../src/common/json/json-body.errors';
import { BODY_LIMIT_BYTES } from '../src/common/json/json-body.limits';
import { PLANT_NAME_MAX_LENGTH as NAME_MAX, PLANT_TAG_MAX_LENGTH as TAG_MAX } from '../src/plants/plants.limits';
import { PlantAlreadyExists } from '../src/plants/plants.errors';
import { TestApp, bearer, exactJson, expectErrorBody, jsonText, startTestApp } from './utils/test-app';
import { expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { PathPrefixProxy } from './utils/path-prefix-proxy';

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;
const MAX_PAGE = 25;

interface Plant {
  id: bigint;
  name: string;
  tag?: string;
}

describe.each(testDatabases())('Plants API on %s', (database) => {
  let t: TestApp;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    t = await startTestApp(database, { PLANTS_MAX_PAGE: String(MAX_PAGE) });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    alice = await t.token({ subject: 'alice' });
    bob = await t.token({ subject: 'bob' });
  });

  const create = (token: string, body: unknown) =>
    t.http().post('/plants').set(bearer(token)).set('Content-Type', 'application/json').send(jsonText(body));
  const list = (token: string, query = '') => t.http().get(`/plants${query}`).set(bearer(token));

  describe('POST /plants', () => {
    it('answers 200 with the plant as stored', async () => {
      const res = await create(alice, { id: 7, name: 'Monstera', tag: 'tropical' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(expectedPlant({ id: 7, name: 'Monstera', tag: 'tropical' }));
      expect(exactJson<Plant[]>(await list(alice))).toEqual([
        expectedPlant({ id: 7n, name: 'Monstera', tag: 'tropical' }),
      ]);
    });

    it('leaves tag out when absent or null, never null', async () => {
      const fern = await create(alice, { id: 1, name: 'Fern' });
      const moss = await create(alice, { id: 2, name: 'Moss', tag: null });
      const listed = await list(alice);
      for (const res of [fern, moss, listed]) expect(res.text).not.toContain('tag');
      expect(fern.body).toEqual(expectedPlant({ id: 1, name: 'Fern' }));
      expect(moss.body).toEqual(expectedPlant({ id: 2, name: 'Moss' }));
      expect(listed.body).toEqual([expectedPlant({ id: 1, name: 'Fern' }), expectedPlant({ id: 2, name: 'Moss' })]);
    });

    it.each([INT64_MAX, INT64_MIN, 9007199254740993n, -9007199254740993n, 0n])(
      'keeps the int64 id %s exact in the answer, the list and on delete',
      async (id) => {
        const res = await create(alice, { id, name: 'Exact' });
        expect(res.status).toBe(200);
        // Written as a plain JSON integer with all its digits.
        expect(res.text).toContain(`"id":${id},`);
        expect(exactJson(res)).toEqual(expectedPlant({ id, name: 'Exact' }));
        // A neighbour that a double would round to the same value must stay distinct.
        await create(alice, { id: id > 0n ? id - 1n : id + 1n, name: 'Neighbour' });
        const listed = exactJson<Plant[]>(await list(alice));
        expect(listed.map((p) => p.id)).toContain(id);
        expect(listed).toHaveLength(2);
        expect((await t.http().delete(`/plants/${id}`).set(bearer(alice))).status).toBe(204);
        const after = exactJson<Plant[]>(await list(alice));
        expect(after.map((p) => p.name)).toEqual(['Neighbour']);
      },
    );

    it.each([
      ['emoji', '🌵🌿🪴 Cactus 👩‍🌾'],
      ['right-to-left', 'نبات الصبار'],
      ['Hebrew', 'צמח בית'],
      ['CJK', '観葉植物'],
      ['combining marks', 'Crème brûlée'],
      ['NUL and control characters', 'a\u0000b\tc'],
    ])('round-trips %s exactly', async (_label, name) => {
      const res = await create(alice, { id: 1, name, tag: name.slice(0, 4) });
      expect(res.status).toBe(200);
      const [plant] = exactJson<Plant[]>(await list(alice));
      expect(plant.name).toBe(name);
      expect(plant.tag).toBe(name.slice(0, 4));
    });

    it('counts characters, not bytes or UTF-16 units: the longest name in emoji fits, one more does not', async () => {
      expect((await create(alice, { id: 1, name: '🌿'.repeat(NAME_MAX), tag: '🌵'.repeat(TAG_MAX) })).status).toBe(200);
      expect(exactJson<Plant[]>(await list(alice))[0].name).toBe('🌿'.repeat(NAME_MAX));
      expectErrorBody(await create(alice, { id: 2, name: '🌿'.repeat(NAME_MAX + 1) }), 400);
      expectErrorBody(await create(alice, { id: 3, name: 'ok', tag: '🌵'.repeat(TAG_MAX + 1) }), 400);
    });

    it('answers 409 for an id the user already holds and leaves the original untouched', async () => {
      await create(alice, { id: 5, name: 'Original', tag: 'first' });
      const res = await create(alice, { id: 5, name: 'Impostor' });
      expectErrorBody(res, 409);
      expect(res.body.message).toBe(new PlantAlreadyExists(5n).message);
      expect(exactJson(await list(alice))).toEqual([expectedPlant({ id: 5n, name: 'Original', tag: 'first' })]);
    });

    // One case per rule, end to end; plants.controller.spec.ts and validators.spec.ts hold the full tables.
    it.each([
      ['an id above int64', { id: INT64_MAX + 1n, name: 'x' }, 'id must be an integer'],
      ['a missing name', { id: 1 }, 'name must be a string'],
      ['a blank name', { id: 1, name: ' \t\n ' }, 'name must not be blank'],
      ['a name too long', { id: 1, name: 'a'.repeat(NAME_MAX + 1) }, `name must be from 1 to ${NAME_MAX}`],
      ['a tag too long', { id: 1, name: 'x', tag: 't'.repeat(TAG_MAX + 1) }, `tag must be from 1 to ${TAG_MAX}`],
      ['a non-string tag', { id: 1, name: 'x', tag: ['a'] }, 'tag must be a string'],
      ['an unknown field', { id: 1, name: 'x', owner: 'bob' }, 'property owner should not exist'],
      ['an array body', [{ id: 1, name: 'x' }], 'Request body must be a JSON object'],
    ])('answers 400 for %s and stores nothing', async (_label, body, message) => {
      const res = await create(alice, body);
      expectErrorBody(res, 400);
      expect(res.body.message).toContain(message);
      expect((await list(alice)).body).toEqual([]);
    });

    it('names every problem of a body in one message', async () => {
      const res = await create(alice, { id: 'x', name: '', extra: true });
      expectErrorBody(res, 400);
      expect(res.body.message).toMatch(new RegExp(`extra.*id must be an integer.*name must be from 1 to ${NAME_MAX}`));
    });

    it('answers 400 for a lone surrogate, which could not be stored as given', async () => {
      const res = await t
        .http()
        .post('/plants')
        .set(bearer(alice))
        .set('Content-Type', 'application/json')
        .send('{"id":1,"name":"\\ud800"}');
      expectErrorBody(res, 400);
      expect(res.body.message).toBe('name must be valid Unicode text');
    });

    it.each([
      ['an id written with an exponent', '{"id":1e3,"name":"x"}', 'id must be an integer'],
      ['an id written with a fraction part', '{"id":5.0,"name":"x"}', 'id must be an integer'],
    ])('answers 400 for %s', async (_label, text, message) => {
      const res = await t.http().post('/plants').set(bearer(alice)).set('Content-Type', 'application/json').send(text);
      expectErrorBody(res, 400);
      expect(res.body.message).toContain(message);
    });

    it.each([
      ['truncated JSON', '{"id": 1, "name": "x"'],
      ['trailing garbage', '{"id":1,"name":"x"} x'],
      ['single quotes', "{'id':1,'name':'x'}"],
      ['duplicate keys with different values', '{"id":1,"id":2,"name":"x"}'],
      ['a __proto__ key', '{"id":1,"name":"x","__proto__":{"admin":true}}'],
      ['deep nesting', '['.repeat(5000) + ']'.repeat(5000)],
    ])('answers 400 for %s', async (_label, text) => {
      const res = await t.http().post('/plants').set(bearer(alice)).set('Content-Type', 'application/json').send(text);
      expectErrorBody(res, 400);
      expect((await list(alice)).body).toEqual([]);
    });

    it('accepts application/json with a charset and +json media types', async () => {
      const a = await t
        .http()
        .post('/plants')
        .set(bearer(alice))
        .set('Content-Type', 'application/json; charset=utf-8')
        .send('{"id":1,"name":"a"}');
      const b = await t
        .http()
        .post('/plants')
        .set(bearer(alice))
        .set('Content-Type', 'application/merge-patch+json')
        .send('{"id":2,"name":"b"}');
      expect([a.status, b.status]).toEqual([200, 200]);
    });

    it.each([
      ['text/plain', 'text/plain'],
      ['form encoded', 'application/x-www-form-urlencoded'],
      ['XML', 'application/xml'],
    ])('answers 415 for a %s body', async (_label, type) => {
      const res = await t.http().post('/plants').set(bearer(alice)).set('Content-Type', type).send('id=1&name=x');
      expectErrorBody(res, 415);
    });

    it('answers 415 for a body without a content type', async () => {
      const res = await t.http().post('/plants').set(bearer(alice)).send(Buffer.from('{"id":1,"name":"x"}'));
      expectErrorBody(res, 415);
    });

    it('answers 400 for no body at all', async () => {
      const res = await t.http().post('/plants').set(bearer(alice));
      expectErrorBody(res, 400);
      expect(res.body.message).toContain('id must be an integer');
    });

    it('answers 413 for a body over the cap, and accepts one just under', async () => {
      const padding = (n: number) => jsonText({ id: 1, name: 'x', tag: 'y'.repeat(n) });
      const over = await t
        .http()
        .post('/plants')
        .set(bearer(alice))
        .set('Content-Type', 'application/json')
        .send(padding(BODY_LIMIT_BYTES));
      expectErrorBody(over, 413);
      expect(over.body.message).toBe(new BodyTooLarge().message);
      const under = await t
        .http()
        .post('/plants')
        .set(bearer(alice))
        .set('Content-Type', 'application/json')
        .send(jsonText({ id: 1, name: 'x' }) + ' '.repeat(BODY_LIMIT_BYTES - 40));
      expect(under.status).toBe(200);
    });
  });

  describe('GET /plants', () => {
    const seed = async (token: string, ids: bigint[]) => {
      for (const id of ids) expect((await create(token, { id, name: `plant ${id}` })).status).toBe(200);
    };

    it("lists the caller's plants ordered by id ascending, signed", async () => {
      await seed(alice, [3n, INT64_MAX, -1n, INT64_MIN, 0n]);
      const ids = exactJson<Plant[]>(await list(alice)).map((p) => p.id);
      expect(ids).toEqual([INT64_MIN, -1n, 0n, 3n, INT64_MAX]);
    });

    it('answers an empty array, not an error, when the user has no plants', async () => {
      const res = await list(alice);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
      expect(res.headers.link).toBeUndefined();
    });

    it('pages through every plant exactly once by following Link rel="next"', async () => {
      const ids = [
        INT64_MIN,
        INT64_MIN + 1n,
        -9007199254740993n,
        ...Array.from({ length: 40 }, (_, i) => BigInt(i * 7 - 100)),
        9007199254740993n,
        INT64_MAX - 1n,
        INT64_MAX,
      ];
      await seed(alice, ids);
      await seed(bob, [1n, 2n]);

      const seen: bigint[] = [];
      // The link is resolved against the URL of the page it came with, as RFC 8288 says.
      let next: URL | undefined = new URL('http://service/plants?limit=6');
      let pages = 0;
      while (next && pages < 50) {
        const res: request.Response = await t
          .http()
          .get(next.pathname + next.search)
          .set(bearer(alice));
        expect(res.status).toBe(200);
        const page = exactJson<Plant[]>(res);
        expect(page.length).toBeLessThanOrEqual(6);
        seen.push(...page.map((p) => p.id));
        const link = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1];
        next = link === undefined ? undefined : new URL(link, next);
        pages += 1;
      }
      expect(seen).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(pages).toBe(Math.ceil(ids.length / 6));
    });

    describe('behind a gateway that serves the API under a path prefix', () => {
      let gateway: PathPrefixProxy;
      beforeAll(async () => {
        await t.app.listen(0, '127.0.0.1');
        gateway = new PathPrefixProxy('/plant-store', (t.app.getHttpServer().address() as AddressInfo).port);
        await gateway.start();
      });
      afterAll(() => gateway.close());

      /** Every page from `start` on, each Link resolved against the URL of the page it came with. */
      async function walk(start: string): Promise<{ ids: bigint[]; urls: string[] }> {
        const ids: bigint[] = [];
        const urls: string[] = [];
        for (let url: URL | undefined = new URL(start); url && urls.length < 20;) {
          urls.push(url.href);
          const res = await fetch(url, { headers: bearer(alice) });
          expect(res.status).toBe(200);
          ids.push(...(parse(await res.text(), null, parseNumberAndBigInt) as Plant[]).map((p) => p.id));
          const link = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
          url = link === undefined ? undefined : new URL(link, url);
        }
        return { ids, urls };
      }

      // With a trailing slash too: the service answers /plants/ as /plants, and the links keep it.
      it.each(['/plants?limit=2', '/plants/?limit=2', `/plants?after=${INT64_MIN}&limit=2`])(
        'walks every page from %s through the gateway, every link staying under its prefix',
        async (path) => {
          const ids = [-9007199254740993n, 1n, 2n, 3n, 9007199254740993n];
          await seed(alice, ids);
          const start = `${gateway.url}${path}`;
          const { ids: seen, urls } = await walk(start);
          expect(seen).toEqual(ids);
          expect(urls).toHaveLength(3);
          for (const url of urls) expect(new URL(url).pathname).toBe(new URL(start).pathname);
          expect(gateway.refused).toEqual([]);
        },
      );
    });

    it('gives the last page no Link, also when it is exactly full', async () => {
      await seed(alice, [1n, 2n, 3n, 4n]);
      const first = await list(alice, '?limit=2');
      expect(first.headers.link).toBe('<?limit=2&after=2>; rel="next"');
      const last = await t.http().get('/plants?limit=2&after=2').set(bearer(alice));
      expect(exactJson<Plant[]>(last).map((p) => p.id)).toEqual([3n, 4n]);
      expect(last.headers.link).toBeUndefined();
    });

    it(`caps a page at PLANTS_MAX_PAGE (${MAX_PAGE}) with or without a limit`, async () => {
      await seed(
        alice,
        Array.from({ length: MAX_PAGE + 3 }, (_, i) => BigInt(i)),
      );
      const unlimited = await list(alice);
      expect(unlimited.body).toHaveLength(MAX_PAGE);
      expect(unlimited.headers.link).toBe(`<?limit=${MAX_PAGE}&after=${MAX_PAGE - 1}>; rel="next"`);
      const large = await list(alice, '?limit=2147483647');
      expect(large.body).toHaveLength(MAX_PAGE);
      const rest = await t
        .http()
        .get(`/plants?limit=${MAX_PAGE}&after=${MAX_PAGE - 1}`)
        .set(bearer(alice));
      expect(rest.body).toHaveLength(3);
    });

    it('accepts an after cursor at either end of the int64 range', async () => {
      await seed(alice, [INT64_MIN, INT64_MAX]);
      expect(exactJson<Plant[]>(await list(alice, `?after=${INT64_MIN}`)).map((p) => p.id)).toEqual([INT64_MAX]);
      expect((await list(alice, `?after=${INT64_MAX}`)).body).toEqual([]);
    });

    it.each([
      ['limit=0'],
      ['limit=1e3'],
      ['after=9223372036854775808'],
      ['after=-9223372036854775809'],
      ['after=1.0'],
      ['after=1&after=2'],
      ['unknown=1'],
    ])('answers 400 for ?%s', async (query) => {
      const res = await list(alice, `?${query}`);
      expectErrorBody(res, 400);
    });
  });

  describe('DELETE /plants/{id}', () => {
    it('answers 204 with no body, then 404 for the same id', async () => {
      await create(alice, { id: 9, name: 'Doomed' });
      const res = await t.http().delete('/plants/9').set(bearer(alice));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expectErrorBody(await t.http().delete('/plants/9').set(bearer(alice)), 404);
      expect((await list(alice)).body).toEqual([]);
    });

    it('answers 404 for an id nobody holds', async () => {
      const res = await t.http().delete(`/plants/${INT64_MAX}`).set(bearer(alice));
      expectErrorBody(res, 404);
      expect(res.body.message).toBe(`Plant ${INT64_MAX} not found`);
    });

    it.each(['-9223372036854775809', '%20'])('answers 400 for the id %s', async (id) => {
      expectErrorBody(await t.http().delete(`/plants/${id}`).set(bearer(alice)), 400);
    });
  });

  describe("one user never sees or touches another's plants", () => {
    it('lets two users hold the same id independently', async () => {
      expect((await create(alice, { id: 7, name: 'Alice rose' })).status).toBe(200);
      expect((await create(bob, { id: 7, name: 'Bob cactus' })).status).toBe(200);
      expect((await list(alice)).body).toEqual([expectedPlant({ id: 7, name: 'Alice rose' })]);
      expect((await list(bob)).body).toEqual([expectedPlant({ id: 7, name: 'Bob cactus' })]);
    });

    it("answers 404 for another user's plant, exactly as for a missing one", async () => {
      await create(alice, { id: 11, name: 'Private' });
      const theirs = await t.http().delete('/plants/11').set(bearer(bob));
      const missing = await t.http().delete('/plants/12').set(bearer(bob));
      expectErrorBody(theirs, 404);
      expect(theirs.body.message).toBe('Plant 11 not found');
      expect(missing.body.message).toBe('Plant 12 not found');
      expect((await list(alice)).body).toEqual([expectedPlant({ id: 11, name: 'Private' })]);
      expect((await list(bob)).body).toEqual([]);
    });

    it('treats user ids case-sensitively', async () => {
      const upper = await t.token({ subject: 'Alice' });
      await create(alice, { id: 1, name: 'lower' });
      expect((await list(upper)).body).toEqual([]);
    });
  });

  describe('every other failure is {error, message} too', () => {
    it.each([
      ['GET', '/nope'],
      ['POST', '/plants/1'],
      ['PUT', '/plants'],
      ['GET', '/plants/1'],
    ])('answers 404 for %s %s', async (method, path) => {
      const res = await t.http()[method.toLowerCase() as 'get'](path).set(bearer(alice));
      expectErrorBody(res, 404);
    });

    it('does not echo the path or query string of an unknown route', async () => {
      const res = await t.http().get('/nope/pst_secret?access_token=pst_secret');
      expectErrorBody(res, 404);
      expect(res.body.message).toBe('No route for GET at this path; the API is described at /docs');
    });

    it('answers 400 for a malformed percent-encoding in the path', async () => {
      expectErrorBody(await t.http().delete('/plants/%E0%A4%A').set(bearer(alice)), 400);
    });

    it('answers 503, not 500, once the database connection is closed', async () => {
      const other = await startTestApp(database);
      const token = await other.token({ subject: 'carol' });
      await other.dataSource.destroy();
      try {
        const res = await other.http().get('/plants').set(bearer(token));
        expectErrorBody(res, 503);
        expect(res.body.message).toBe('The database is unavailable; try again shortly');
      } finally {
        await other.close();
      }
    });
  });
});
