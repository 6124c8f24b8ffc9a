import { isInteger, parse } from 'lossless-json';
import { Plant } from '../src/plants/plant.entity';
import { PlantAlreadyExists } from '../src/plants/plants.errors';
import { exactBody, expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { RawResponse, expectCleanError, listenOnLoopback, rawRequest } from './utils/raw-http';
import { TestApp, bearer, startTestApp } from './utils/test-app';

const INT64_MAX = 9223372036854775807n;
const exactInteger = (n: string) => (isInteger(n) ? BigInt(n) : Number(n));

interface StoredPlant {
  id: bigint;
  name: string;
  tag?: string;
}

/** A small deterministic PRNG (mulberry32): a failing mix can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Operation = { kind: 'create'; id: bigint; name: string } | { kind: 'delete'; id: bigint };
type Outcome = Operation & { status: number; text: string };

/**
 * Concurrent writers. The app listens on a loopback port and every request goes over its own TCP
 * connection, all sent at once, so on MySQL the requests really run in parallel on the pool.
 */
describe.each(testDatabases())('Concurrent writes on %s', (database) => {
  let t: TestApp;
  let port: number;
  let racer: string;
  let bystander: string;

  beforeAll(async () => {
    t = await startTestApp(database);
    port = await listenOnLoopback(t.app);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    racer = await t.token({ subject: 'racer' });
    bystander = await t.token({ subject: 'bystander' });
  });

  const create = (token: string, id: bigint, name: string) =>
    rawRequest(port, {
      method: 'POST',
      path: '/plants',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: `{"id":${id},"name":${JSON.stringify(name)}}`,
      timeoutMs: 20_000,
    });
  const remove = (token: string, id: bigint) =>
    rawRequest(port, { method: 'DELETE', path: `/plants/${id}`, headers: bearer(token), timeoutMs: 20_000 });

  /** The rows of one owner, read through SQL (not the API). */
  async function rowsOf(owner: string): Promise<StoredPlant[]> {
    const rows = await t.dataSource.getRepository(Plant).find({ where: { owner }, order: { id: 'ASC' } });
    return rows.map((p) => (p.tag === null ? { id: p.id, name: p.name } : { id: p.id, name: p.name, tag: p.tag }));
  }

  /** Every plant of a user through the API, following Link rel="next". */
  async function listAll(token: string): Promise<StoredPlant[]> {
    const all: StoredPlant[] = [];
    let next: URL | undefined = new URL('http://service/plants?limit=1000');
    while (next) {
      const res: RawResponse = await rawRequest(port, { path: next.pathname + next.search, headers: bearer(token) });
      expect(res.status).toBe(200);
      all.push(...(parse(res.text, undefined, exactInteger) as StoredPlant[]));
      const link = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1];
      next = link === undefined ? undefined : new URL(link, next);
    }
    return all;
  }

  it.each([
    ['a small id', 42n],
    ['int64 max', INT64_MAX],
    ['a negative id beyond 2^53', -9007199254740993n],
  ])(
    '50 simultaneous creates of %s by one user: exactly one 200, 49 409s, one row with the winning body',
    async (_label, id) => {
      const names = Array.from({ length: 50 }, (_, i) => `racer ${i} 🌿`);
      const answers = await Promise.all(names.map((name) => create(racer, id, name)));

      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(49);
      for (const conflict of answers.filter((r) => r.status === 409)) {
        expectCleanError(conflict, [409]);
        expect(JSON.parse(conflict.text).message).toBe(new PlantAlreadyExists(BigInt(id)).message);
      }
      const winner = answers.findIndex((r) => r.status === 200);
      expect(exactBody(answers[winner].text)).toEqual(expectedPlant({ id, name: names[winner] }));

      expect(await rowsOf('racer')).toEqual([{ id, name: names[winner] }]);
      expect(await listAll(racer)).toEqual([expectedPlant({ id, name: names[winner] })]);
    },
  );

  it('50 simultaneous creates of one id split between two users: one winner each, neither sees the other', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 === 0 ? create(racer, 7n, `racer ${i}`) : create(bystander, 7n, `bystander ${i}`),
      ),
    );
    for (const [token, owner] of [
      [racer, 'racer'],
      [bystander, 'bystander'],
    ] as const) {
      const mine = answers.filter((_, i) => (i % 2 === 0) === (owner === 'racer'));
      expect(mine.filter((r) => r.status === 200)).toHaveLength(1);
      expect(mine.filter((r) => r.status === 409)).toHaveLength(24);
      const won = JSON.parse(mine.find((r) => r.status === 200)!.text).name as string;
      expect(won.startsWith(owner)).toBe(true);
      expect(await rowsOf(owner)).toEqual([{ id: 7n, name: won }]);
      expect(await listAll(token)).toEqual([expectedPlant({ id: 7n, name: won })]);
    }
  });

  /**
   * One id's acknowledged answers, put in an order a serial store could have produced them:
   * every 404 first (absent), then create, its 409s, delete, create, ... A serial history exists
   * exactly when the successful creates and deletes alternate starting from absent (creates minus
   * deletes is 0 or 1) and no 409 came without any successful create; the final state is then
   * present iff there was one more create than delete, holding the body of the last create. The
   * create whose body the store holds is put last, and the replay must reproduce the store.
   */
  function replay(id: bigint, outcomes: Outcome[], stored: StoredPlant | undefined): StoredPlant | undefined {
    const created = outcomes.filter((o) => o.kind === 'create' && o.status === 200) as (Outcome & { kind: 'create' })[];
    const deleted = outcomes.filter((o) => o.kind === 'delete' && o.status === 204);
    const conflicts = outcomes.filter((o) => o.kind === 'create' && o.status === 409);
    const missing = outcomes.filter((o) => o.kind === 'delete' && o.status === 404);
    const context = `id ${id}: ${created.length} created, ${deleted.length} deleted, ${conflicts.length} conflicts, ${missing.length} not found; stored ${JSON.stringify(stored?.name ?? null)}`;

    expect({ context, balance: created.length - deleted.length }).toEqual({ context, balance: stored ? 1 : 0 });
    if (conflicts.length > 0) expect({ context, creates: created.length > 0 }).toEqual({ context, creates: true });

    // The serial order: 404s, then (create, 409s on the first round, delete)*, the stored create last.
    const last = stored ? created.find((c) => c.name === stored.name) : undefined;
    if (stored) expect({ context, lastCreateFound: last !== undefined }).toEqual({ context, lastCreateFound: true });
    const creates = last ? [...created.filter((c) => c !== last), last] : created;
    const order: Outcome[] = [...missing];
    creates.forEach((c, i) => {
      order.push(c);
      if (i === 0) order.push(...conflicts);
      if (i < deleted.length) order.push(deleted[i]);
    });

    let state: StoredPlant | undefined;
    for (const op of order) {
      if (op.kind === 'create') {
        expect({ context, op: `${op.kind} -> ${op.status}`, present: state !== undefined }).toEqual({
          context,
          op: `${op.kind} -> ${op.status}`,
          present: op.status === 409,
        });
        if (op.status === 200) state = { id, name: op.name };
      } else {
        expect({ context, op: `${op.kind} -> ${op.status}`, present: state !== undefined }).toEqual({
          context,
          op: `${op.kind} -> ${op.status}`,
          present: op.status === 204,
        });
        state = undefined;
      }
    }
    return state;
  }

  it.each([1, 2, 3])(
    '200 mixed creates and deletes at once over 5 ids leave the store exactly as the answers say (seed %i)',
    async (seed) => {
      const random = prng(seed);
      const ids = [1n, 2n, 3n, 4n, 5n];
      // The other user holds the same ids; none of the racer's operations may touch them.
      for (const id of ids) expect((await create(bystander, id, `bystander ${id}`)).status).toBe(200);

      const operations: Operation[] = Array.from({ length: 200 }, (_, i) => {
        const id = ids[Math.floor(random() * ids.length)];
        return random() < 0.55 ? { kind: 'create', id, name: `op ${i} seed ${seed}` } : { kind: 'delete', id };
      });
      const answers = await Promise.all(
        operations.map((op) => (op.kind === 'create' ? create(racer, op.id, op.name) : remove(racer, op.id))),
      );
      const outcomes: Outcome[] = operations.map((op, i) => ({
        ...op,
        status: answers[i].status,
        text: answers[i].text,
      }));

      for (const o of outcomes) {
        const allowed = o.kind === 'create' ? [200, 409] : [204, 404];
        if (!allowed.includes(o.status)) {
          throw new Error(`${o.kind} ${o.id} answered ${o.status} ${o.text} (seed ${seed})`);
        }
        if (o.status >= 400)
          expectCleanError({ status: o.status, headers: answers[outcomes.indexOf(o)].headers, text: o.text }, [
            o.status,
          ]);
        if (o.kind === 'create' && o.status === 200)
          expect(exactBody(o.text)).toEqual(expectedPlant({ id: o.id, name: o.name! }));
        if (o.kind === 'delete' && o.status === 204) expect(o.text).toBe('');
      }

      const stored = await rowsOf('racer');
      const listed = await listAll(racer);
      expect(listed).toEqual(stored.map((plant) => expectedPlant(plant)));
      const replayed = ids
        .map((id) =>
          replay(
            id,
            outcomes.filter((o) => o.id === id),
            stored.find((p) => p.id === id),
          ),
        )
        .filter((p) => p !== undefined);
      expect(stored).toEqual(replayed);
      // Both outcomes of each kind occurred, so the race really was exercised.
      const seen = new Set(outcomes.map((o) => `${o.kind} ${o.status}`));
      expect([...seen].sort()).toEqual(['create 200', 'create 409', 'delete 204', 'delete 404']);

      expect(await rowsOf('bystander')).toEqual(ids.map((id) => ({ id, name: `bystander ${id}` })));
    },
  );
});
