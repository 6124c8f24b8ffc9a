import { parse, parseNumberAndBigInt } from 'lossless-json';
import { SubscriptionIdsSafeInJavaScript1764400000000 } from '../src/database/migrations/1764400000000-SubscriptionIdsSafeInJavaScript';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

/**
 * Subscription ids are chosen by the service, and a client reads them with whatever JSON parser it
 * has: most read numbers as doubles (`res.json()`, axios, Swagger UI). Every id must come back
 * exactly when such a client sends it again, and subscriptions made by the release that gave
 * 63-bit ids must get such an id too, without losing what was recorded for them or the old id.
 */
describe.each(testDatabases())('Webhook subscription ids on %s', (database) => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'js-client' });
  });

  /** A call as a browser or Node.js client makes it: the body read with JSON.parse. */
  const call = async (method: string, path: string, body?: unknown, as = token) => {
    const req = t.http()[method.toLowerCase() as 'get' | 'post' | 'delete'](path).set(bearer(as));
    const res = body === undefined ? await req : await req.send(body as object);
    return { status: res.status, text: res.text, json: res.text ? (JSON.parse(res.text) as unknown) : undefined };
  };
  const ids = (text: string) =>
    (parse(text, null, parseNumberAndBigInt) as { id: bigint }[]).map((subscription) => subscription.id);

  it('gives every subscription an id that JSON.parse reads exactly, and DELETE with what it read works', async () => {
    const created: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call('POST', '/webhooks', { url: `http://127.0.0.1:9/hook-${i}`, events: ['plant.created'] });
      expect(res.status).toBe(201);
      const { id } = res.json as { id: number };
      // Exactly the integer the service wrote: a double rounds nothing up to 2^53 - 1.
      expect(Number.isSafeInteger(id)).toBe(true);
      expect(id).toBeGreaterThanOrEqual(1);
      expect(ids(`[${res.text}]`)).toEqual([BigInt(id)]);
      created.push(id);
    }
    const listed = await call('GET', '/webhooks');
    expect((listed.json as { id: number }[]).map((subscription) => subscription.id)).toEqual(
      [...created].sort((a, b) => a - b),
    );
    for (const id of (listed.json as { id: number }[]).map((subscription) => subscription.id)) {
      expect((await call('GET', `/webhooks/${id}/deliveries`)).status).toBe(200);
      expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(204);
    }
    expect((await call('GET', '/webhooks')).json).toEqual([]);
  });

  describe('on a database the previous release used', () => {
    const migration = new SubscriptionIdsSafeInJavaScript1764400000000();
    /** What the previous release wrote: a 63-bit key, deliveries and attempts referring to it. */
    const OLD = 5731960143207412291n;
    const KEPT = 4242n;
    const BOBS = 2n ** 63n - 1n;

    /** On the previous release's schema its columns are written too; on this release's they are gone. */
    const insertPrevious = async (key: bigint, owner: string, previousSchema = true) => {
      await t.dataSource.query(
        `INSERT INTO webhook_subscriptions (id, owner, url, events${previousSchema ? ', on_created, on_deleted' : ''}, ` +
          `description, secret, created_at) VALUES (?, ?, 'https://example.com/hook', '["plant.created"]'` +
          `${previousSchema ? ', 1, 0' : ''}, NULL, 'sealed', 1764000000000)`,
        [key, owner],
      );
      // Finished, so no instance sends them while the test looks.
      for (const delivery of [1, 2])
        await t.dataSource.query(
          `INSERT INTO webhook_deliveries (subscription_id, event_type, data${previousSchema ? ', plant_id' : ''}, ` +
            `occurred_at, state, attempts, next_attempt_at) VALUES (?, 'plant.created', '{"id":${delivery}}'` +
            `${previousSchema ? `, ${delivery}` : ''}, 1, 'delivered', 1, 1)`,
          [key],
        );
      const deliveries = (await t.dataSource.query('SELECT id FROM webhook_deliveries WHERE subscription_id = ?', [
        key,
      ])) as { id: unknown }[];
      for (const { id } of deliveries)
        await t.dataSource.query(
          'INSERT INTO webhook_attempts (subscription_id, delivery_id, event_type, attempt, status_code, error, attempted_at, duration_ms) ' +
            `VALUES (?, ?, 'plant.created', 1, 200, NULL, ${Date.now()}, 5)`,
          [key, id],
        );
    };
    const recorded = async (key: bigint) => {
      const [deliveries] = (await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE subscription_id = ?',
        [key],
      )) as { n: unknown }[];
      const [attempts] = (await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM webhook_attempts WHERE subscription_id = ?',
        [key],
      )) as { n: unknown }[];
      return [Number(deliveries.n), Number(attempts.n)];
    };
    const publicIds = async () =>
      (
        (await t.dataSource.query('SELECT id, public_id FROM webhook_subscriptions ORDER BY id')) as {
          id: unknown;
          public_id: unknown;
        }[]
      ).map((row) => [String(row.id), String(row.public_id)]);

    it('gives its subscriptions ids within 2^53 - 1, keeps what was recorded for them, and still knows the old ids', async () => {
      // Back to the schema the previous release knew, this migration and those after it undone.
      const names = t.dataSource.migrations.map((applied) => applied.name);
      for (let i = names.indexOf(migration.name); i < names.length; i += 1) await t.dataSource.undoLastMigration();
      const bob = await t.token({ subject: 'bob' });
      await insertPrevious(OLD, 'js-client');
      await insertPrevious(KEPT, 'js-client');
      await insertPrevious(BOBS, 'bob');
      await t.dataSource.runMigrations();

      const listed = (await call('GET', '/webhooks')).json as { id: number }[];
      const newId = listed.map((subscription) => subscription.id).find((id) => id !== Number(KEPT))!;
      // An id that was already exact stays; the other one gets a new one, exact too.
      expect(listed.map((subscription) => subscription.id).sort((a, b) => a - b)).toEqual(
        [Number(KEPT), newId].sort((a, b) => a - b),
      );
      expect(Number.isSafeInteger(newId)).toBe(true);
      const [bobsId] = ((await call('GET', '/webhooks', undefined, bob)).json as { id: number }[]).map((s) => s.id);
      expect(Number.isSafeInteger(bobsId)).toBe(true);

      // Running it again changes nothing.
      const before = await publicIds();
      const runner = t.dataSource.createQueryRunner();
      await migration.up(runner).finally(() => runner.release());
      await expect(publicIds()).resolves.toEqual(before);

      // What was recorded for it is found by the new id and by the old one, with the webhook-ids receivers saw.
      const byNew = await call('GET', `/webhooks/${newId}/deliveries`);
      const byOld = await call('GET', `/webhooks/${OLD}/deliveries`);
      expect(byNew.status).toBe(200);
      expect(byNew.json).toHaveLength(2);
      expect(byOld.json).toEqual(byNew.json);
      await expect(recorded(OLD)).resolves.toEqual([2, 2]);

      // DELETE with the id JSON.parse read, or with the old one a client may hold.
      expect((await call('DELETE', `/webhooks/${newId}`)).status).toBe(204);
      await expect(recorded(OLD)).resolves.toEqual([0, 0]);
      expect((await call('DELETE', `/webhooks/${OLD}`)).status).toBe(404);
      expect((await call('DELETE', `/webhooks/${BOBS}`, undefined, bob)).status).toBe(204);
      await expect(recorded(BOBS)).resolves.toEqual([0, 0]);
      await expect(recorded(KEPT)).resolves.toEqual([2, 2]);
      // Another user's old id is not found, like any id of another user.
      await insertPrevious(OLD, 'bob', false);
      expect((await call('DELETE', `/webhooks/${OLD}`)).status).toBe(404);
    });
  });
});
