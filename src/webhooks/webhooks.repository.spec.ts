import { Database, isUniqueViolation } from '../database';
import { testDatabases } from '../../test/utils/databases';
import { RepositoryDatabase, failureOf, startRepositoryDatabase } from '../../test/utils/repository-database';
import { RECOVER_BATCH } from './webhooks.limits';
import {
  ClaimedDelivery,
  DISABLED_BY_ITS_USER,
  DUE_SUBSCRIPTIONS,
  NewSubscription,
  WebhooksRepository,
  noSubscriptionWants,
  shareSlots,
} from './webhooks.repository';

const TABLES = ['webhook_subscriptions', 'webhook_deliveries', 'webhook_attempts', 'webhook_events', 'plants'];
const LEASE = 60_000;
const dataOf = (plantId: bigint) => `{"id":${plantId},"name":"Plant ${plantId}"}`;

function subscription(id: bigint, fields: Partial<NewSubscription> = {}): NewSubscription {
  return {
    id,
    owner: 'alice',
    url: `https://example.com/hooks/${id}`,
    events: ['plant.created', 'plant.deleted'],
    description: null,
    sealedSecret: `sealed-${id}`,
    createdAt: 1_700_000_000_000 + Number(id),
    ...fields,
  };
}

describe.each(testDatabases())(`${WebhooksRepository.name} on %s`, (name) => {
  let db: RepositoryDatabase;
  let webhooks: WebhooksRepository;

  beforeAll(async () => {
    db = await startRepositoryDatabase(name, [WebhooksRepository]);
    webhooks = db.get(WebhooksRepository);
  });
  afterAll(() => db.close());
  beforeEach(() => db.clear(...TABLES));

  /** A pending delivery of `subscriptionId`, due `dueInMs` from now (negative: overdue). */
  async function pendingDelivery(subscriptionId: bigint, plantId: bigint, dueInMs = -1000): Promise<void> {
    const now = Date.now();
    await db.dataSource.query(
      'INSERT INTO webhook_deliveries (subscription_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
        "VALUES (?, 'plant.created', ?, ?, 'pending', 0, ?)",
      [subscriptionId, dataOf(plantId), now, now + dueInMs],
    );
  }

  /** What a claim took, without caps. */
  const claimedBy = async (limit: number, lease: number, claim: string) =>
    (await webhooks.claimDue(limit, lease, claim)).deliveries;

  const deliveryStates = async (subscriptionId: bigint) =>
    (
      (await db.dataSource.query(
        'SELECT state, attempts, claim FROM webhook_deliveries WHERE subscription_id = ? ORDER BY id',
        [subscriptionId],
      )) as { state: string; attempts: unknown; claim: string | null }[]
    ).map((row) => ({ state: row.state, attempts: Number(row.attempts), claim: row.claim }));

  describe('subscriptions', () => {
    it('inserts, lists in id order with their events, and tells whether one exists for the owner', async () => {
      await expect(
        webhooks.insertSubscription(subscription(2n, { events: ['plant.deleted'], description: 'sync' }), 10),
      ).resolves.toBe(true);
      await expect(webhooks.insertSubscription(subscription(1n, { events: ['plant.created'] }), 10)).resolves.toBe(
        true,
      );
      await expect(webhooks.insertSubscription(subscription(3n, { owner: 'bob' }), 10)).resolves.toBe(true);
      await expect(webhooks.listSubscriptions('alice')).resolves.toEqual([
        {
          id: 1n,
          url: 'https://example.com/hooks/1',
          events: ['plant.created'],
          description: null,
          createdAt: 1_700_000_000_001,
          disabledAt: null,
          disabledReason: null,
          previousSecretExpiresAt: null,
        },
        {
          id: 2n,
          url: 'https://example.com/hooks/2',
          events: ['plant.deleted'],
          description: 'sync',
          createdAt: 1_700_000_000_002,
          disabledAt: null,
          disabledReason: null,
          previousSecretExpiresAt: null,
        },
      ]);
      await expect(webhooks.findSubscription('alice', 1n)).resolves.toBe(1n);
      await expect(webhooks.findSubscription('alice', 3n)).resolves.toBeUndefined();
      await expect(webhooks.findSubscription('bob', 3n)).resolves.toBe(3n);
    });

    /** A subscription made before public ids: a 63-bit key, and the public id the migrations gave it. */
    const subscriptionWithKey = (key: bigint, publicId: bigint, owner = 'alice') =>
      db.dataSource.query(
        'INSERT INTO webhook_subscriptions (id, public_id, owner, url, events, description, secret, created_at) ' +
          `VALUES (?, ?, ?, 'https://example.com/old', '["plant.created"]', NULL, 'sealed', 1)`,
        [key, publicId, owner],
      );
    it('shows a subscription by its public id, and finds it by that or by its key', async () => {
      const key = 5731960143207412291n;
      await subscriptionWithKey(key, 77n);
      await webhooks.insertSubscription(subscription(78n), 10);
      await expect(webhooks.listSubscriptions('alice')).resolves.toMatchObject([{ id: 77n }, { id: 78n }]);
      await expect(webhooks.findSubscription('alice', 77n)).resolves.toBe(key);
      await expect(webhooks.findSubscription('alice', key)).resolves.toBe(key);
      await expect(webhooks.findSubscription('bob', key)).resolves.toBeUndefined();
      await pendingDelivery(key, 10n);
      await expect(webhooks.deleteSubscription('bob', 77n)).resolves.toBe(false);
      await expect(webhooks.deleteSubscription('alice', 77n)).resolves.toBe(true);
      await expect(deliveryStates(key)).resolves.toEqual([]);
      await subscriptionWithKey(key, 77n);
      await expect(webhooks.deleteSubscription('alice', key)).resolves.toBe(true);
      await expect(webhooks.listSubscriptions('alice')).resolves.toMatchObject([{ id: 78n }]);
    });

    it('never gives one public id to two subscriptions', async () => {
      await webhooks.insertSubscription(subscription(9n), 10);
      await subscriptionWithKey(2n ** 60n, 10n);
      const taken = await failureOf(
        db.dataSource.query('UPDATE webhook_subscriptions SET public_id = 9 WHERE id = ?', [2n ** 60n]),
      );
      expect(isUniqueViolation(taken)).toBe(true);
    });

    it('refuses a subscription beyond the per-owner limit, counting only the owner', async () => {
      await webhooks.insertSubscription(subscription(1n), 2);
      await webhooks.insertSubscription(subscription(2n), 2);
      await expect(webhooks.insertSubscription(subscription(3n), 2)).resolves.toBe(false);
      await expect(webhooks.insertSubscription(subscription(4n, { owner: 'bob' }), 2)).resolves.toBe(true);
      await expect(webhooks.listSubscriptions('alice')).resolves.toHaveLength(2);
    });

    it('refuses an id in use as a unique violation', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      const duplicate = await failureOf(webhooks.insertSubscription(subscription(1n, { owner: 'bob' }), 10));
      expect(isUniqueViolation(duplicate)).toBe(true);
    });

    it('deletes the owner’s subscription with its deliveries and attempts; another owner’s is not found', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n), 10);
      await pendingDelivery(1n, 10n);
      await pendingDelivery(2n, 20n);
      const [claimed] = (await claimedBy(10, LEASE, 'c')).filter((d) => d.subscriptionId === 1n);
      await webhooks.recordAttempt(
        claimed,
        'c',
        { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() },
        retry(),
        3_600_000,
      );
      await expect(webhooks.deleteSubscription('bob', 1n)).resolves.toBe(false);
      await expect(webhooks.deleteSubscription('alice', 1n)).resolves.toBe(true);
      await expect(webhooks.deleteSubscription('alice', 1n)).resolves.toBe(false);
      await expect(deliveryStates(1n)).resolves.toEqual([]);
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toEqual([]);
      await expect(deliveryStates(2n)).resolves.toHaveLength(1);
    });
  });

  const retry = (delayMs = 60_000) => ({ kind: 'retry' as const, delayMs });

  describe('sealed secrets', () => {
    it('lists, in id order after a cursor, the secrets not under a prefix, and replaces one only if unchanged', async () => {
      const big = 9_223_372_036_854_775_807n;
      for (const [id, sealedSecret] of [
        [big, 'v1.old.c'],
        [5n, 'v1.new.b'],
        [3n, 'v1.old.a'],
        [7n, 'v1.other.d'],
      ] as const) {
        await webhooks.insertSubscription(subscription(id, { owner: `owner-${id}`, sealedSecret, createdAt: 1 }), 10);
      }
      await expect(webhooks.secretsNotStartingWith('v1.new.', undefined, 2)).resolves.toEqual([
        { id: 3n, secret: 'v1.old.a' },
        { id: 7n, secret: 'v1.other.d' },
      ]);
      await expect(webhooks.secretsNotStartingWith('v1.new.', 7n, 2)).resolves.toEqual([
        { id: big, secret: 'v1.old.c' },
      ]);

      await expect(webhooks.replaceSecret(3n, 'v1.stale.a', 'v1.new.x')).resolves.toBe(false);
      await expect(webhooks.replaceSecret(3n, 'v1.old.a', 'v1.new.a')).resolves.toBe(true);
      await expect(webhooks.replaceSecret(3n, 'v1.old.a', 'v1.new.y')).resolves.toBe(false);
      await expect(webhooks.secretsNotStartingWith('v1.new.', undefined, 10)).resolves.toEqual([
        { id: 7n, secret: 'v1.other.d' },
        { id: big, secret: 'v1.old.c' },
      ]);
    });
  });

  describe('events', () => {
    const deliveries = async () =>
      (
        (await db.dataSource.query(
          "SELECT subscription_id, event_type, data, state FROM webhook_deliveries WHERE state = 'pending' ORDER BY id",
        )) as { subscription_id: unknown; event_type: string; data: string; state: string }[]
      ).map((row) => [Number(row.subscription_id), row.event_type, row.data]);
    /** Whether a plant statement guarded by the condition would run: the condition alone, on the database. */
    const unwatched = async (owner: string, types: Parameters<typeof noSubscriptionWants>[1]) => {
      const condition = noSubscriptionWants(owner, types);
      const rows = (await db.dataSource.query(`SELECT 1 AS yes FROM (SELECT 1 AS one) one WHERE ${condition.sql}`, [
        ...condition.parameters,
      ])) as unknown[];
      return rows.length === 1;
    };

    it('records a delivery for every enabled subscription of the owner that wants the event, and only those', async () => {
      await webhooks.insertSubscription(subscription(1n, { events: ['plant.created'] }), 10);
      await webhooks.insertSubscription(subscription(2n, { events: ['plant.deleted'] }), 10);
      await webhooks.insertSubscription(subscription(3n), 10);
      await webhooks.insertSubscription(subscription(4n, { owner: 'bob' }), 10);
      await webhooks.insertSubscription(subscription(5n), 10);
      await db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1 WHERE id = 5');
      await expect(
        webhooks.recordEvents('alice', [{ type: 'plant.created', data: '{"id":7,"name":"Fern"}' }]),
      ).resolves.toBe(3);
      await expect(deliveries()).resolves.toEqual([
        [1, 'plant.created', '{"id":7,"name":"Fern"}'],
        [3, 'plant.created', '{"id":7,"name":"Fern"}'],
      ]);
      // The disabled subscription's is held; all three carry the one event, recorded once.
      const rows = (await db.dataSource.query(
        'SELECT d.subscription_id, d.state, d.occurred_at, e.id AS event, e.owner, e.occurred_at AS event_at ' +
          'FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id ORDER BY d.subscription_id',
      )) as Record<string, unknown>[];
      expect(rows.map((row) => [Number(row.subscription_id), row.state, row.owner])).toEqual([
        [1, 'pending', 'alice'],
        [3, 'pending', 'alice'],
        [5, 'held', 'alice'],
      ]);
      expect(new Set(rows.map((row) => String(row.event))).size).toBe(1);
      expect(rows.every((row) => String(row.occurred_at) === String(row.event_at))).toBe(true);
    });

    it('records no event that no subscription of the owner wants', async () => {
      await webhooks.insertSubscription(subscription(1n, { events: ['plant.deleted'] }), 10);
      await expect(
        webhooks.recordEvents('alice', [{ type: 'plant.created', data: '{"id":7,"name":"Fern"}' }]),
      ).resolves.toBe(0);
      await expect(webhooks.recordEvents('bob', [{ type: 'plant.deleted', data: '{"id":7}' }])).resolves.toBe(0);
      await expect(db.dataSource.query('SELECT id FROM webhook_events')).resolves.toEqual([]);
    });

    it("lists the owner's events by id, either way, a page at a time, by type and time", async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      for (let id = 1; id <= 5; id++) {
        const type = id % 2 === 0 ? 'plant.deleted' : 'plant.created';
        await webhooks.recordEvents('alice', [{ type, data: `{"id":${id}}` }]);
      }
      await webhooks.recordEvents('bob', [{ type: 'plant.created', data: '{"id":99}' }]);
      const all = await webhooks.listEvents('alice', { limit: 10, order: 'asc' });
      expect(all.map((event) => event.data)).toEqual([1, 2, 3, 4, 5].map((id) => `{"id":${id}}`));
      expect(all[0]).toEqual({
        id: expect.any(BigInt),
        type: 'plant.created',
        data: '{"id":1}',
        occurredAt: expect.any(Number),
      });
      // One more than the page, to tell that another follows.
      const newest = await webhooks.listEvents('alice', { limit: 2, order: 'desc' });
      expect(newest.map((event) => event.data)).toEqual(['{"id":5}', '{"id":4}', '{"id":3}']);
      const next = await webhooks.listEvents('alice', { limit: 2, order: 'desc', after: newest[1].id });
      expect(next.map((event) => event.data)).toEqual(['{"id":3}', '{"id":2}', '{"id":1}']);
      const after = await webhooks.listEvents('alice', { limit: 10, order: 'asc', after: all[2].id });
      expect(after.map((event) => event.data)).toEqual(['{"id":4}', '{"id":5}']);
      const deleted = await webhooks.listEvents('alice', { limit: 10, order: 'asc', types: ['plant.deleted'] });
      expect(deleted.map((event) => event.data)).toEqual(['{"id":2}', '{"id":4}']);
      await db.dataSource.query('UPDATE webhook_events SET occurred_at = 1000 * id');
      const ids = all.map((event) => Number(event.id));
      const window = await webhooks.listEvents('alice', {
        limit: 10,
        order: 'asc',
        since: 1000 * ids[1],
        until: 1000 * ids[3],
      });
      expect(window.map((event) => event.data)).toEqual(['{"id":2}', '{"id":3}']);
    });

    it('tells a plant statement whether a subscription of the owner wants the event', async () => {
      await expect(unwatched('alice', ['plant.created'])).resolves.toBe(true);
      await webhooks.insertSubscription(subscription(1n, { events: ['plant.deleted'] }), 10);
      await expect(unwatched('alice', ['plant.created'])).resolves.toBe(true);
      await expect(unwatched('alice', ['plant.deleted'])).resolves.toBe(false);
      await expect(unwatched('bob', ['plant.deleted'])).resolves.toBe(true);
      // A disabled subscription still wants it: its deliveries are held, to be recovered.
      await db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1 WHERE id = 1');
      await expect(unwatched('alice', ['plant.deleted'])).resolves.toBe(false);
    });
  });

  describe('claimDue', () => {
    it('claims due deliveries with what sending them needs, oldest due first, up to the limit', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n, -3000);
      await pendingDelivery(1n, 12n, -2000);
      await pendingDelivery(1n, 13n, -1000);
      await pendingDelivery(1n, 14n, 60_000);
      const claimed = await claimedBy(2, LEASE, 'c1');
      expect(claimed.map((d) => d.data)).toEqual([dataOf(11n), dataOf(12n)]);
      expect(claimed[0]).toMatchObject({
        subscriptionId: 1n,
        type: 'plant.created',
        attempts: 0,
        url: 'https://example.com/hooks/1',
        sealedSecret: 'sealed-1',
        disabled: false,
      });
      await expect(webhooks.dueBacklog()).resolves.toMatchObject({ due: 1 });
    });

    it('leases what it claims: not due again for another claim until the lease ends', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      await expect(claimedBy(10, LEASE, 'c1')).resolves.toHaveLength(1);
      await expect(claimedBy(10, LEASE, 'c2')).resolves.toEqual([]);
      await expect(webhooks.dueBacklog()).resolves.toMatchObject({ due: 0 });
      await pendingDelivery(1n, 12n);
      // A lease already over: the delivery is due again at once, as after a crashed instance.
      await expect(claimedBy(10, -1000, 'c3')).resolves.toHaveLength(1);
      await expect(claimedBy(10, LEASE, 'c4')).resolves.toMatchObject([{ data: dataOf(12n) }]);
    });
  });

  describe('recordAttempt', () => {
    async function claimOne(): Promise<ClaimedDelivery> {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      const [claimed] = await claimedBy(1, LEASE, 'c1');
      return claimed;
    }

    it('records a success: the attempt, and the delivery delivered', async () => {
      const claimed = await claimOne();
      await expect(
        webhooks.recordAttempt(
          claimed,
          'c1',
          { statusCode: 204, error: null, durationMs: 12.4, startedAt: performance.now() },
          { kind: 'delivered' },
          1000,
        ),
      ).resolves.toEqual({ disabled: false });
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'delivered', attempts: 1, claim: null }]);
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toEqual([
        {
          deliveryId: claimed.id,
          eventId: null,
          type: 'plant.created',
          attempt: 1,
          statusCode: 204,
          error: null,
          attemptedAt: expect.any(Number),
          durationMs: 12,
        },
      ]);
    });

    it('dates the attempt when it began, not when its outcome is recorded', async () => {
      const claimed = await claimOne();
      const before = Date.now();
      // Began 3 s ago, by this process's clock: a receiver that took that long to answer.
      await webhooks.recordAttempt(
        claimed,
        'c1',
        { statusCode: 204, error: null, durationMs: 3000, startedAt: performance.now() - 3000 },
        { kind: 'delivered' },
        1000,
      );
      const after = Date.now();
      const [{ attemptedAt }] = await webhooks.recentAttempts(1n, 10);
      expect(attemptedAt).toBeGreaterThanOrEqual(before - 3000 - 50);
      expect(attemptedAt).toBeLessThanOrEqual(after - 3000 + 50);
    });

    it('puts a failed delivery back as pending, due after the delay', async () => {
      const claimed = await claimOne();
      await webhooks.recordAttempt(
        claimed,
        'c1',
        { statusCode: null, error: 'timeout', durationMs: 5, startedAt: performance.now() },
        retry(),
        3_600_000,
      );
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 1, claim: null }]);
      await expect(webhooks.dueBacklog()).resolves.toMatchObject({ due: 0 });
      const [again] = await claimedBy(1, LEASE, 'c2');
      expect(again).toBeUndefined();
      await expect(webhooks.listSubscriptions('alice')).resolves.toMatchObject([{ disabledAt: null }]);
    });

    it('marks a delivery with no attempts left failed', async () => {
      const claimed = await claimOne();
      await webhooks.recordAttempt(
        claimed,
        'c1',
        { statusCode: 500, error: null, durationMs: 5, startedAt: performance.now() },
        { kind: 'failed' },
        3_600_000,
      );
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'failed', attempts: 1, claim: null }]);
    });

    it('changes nothing of a delivery whose claim was lost, but keeps the attempt', async () => {
      const claimed = await claimOne();
      await webhooks.recordAttempt(
        claimed,
        'not-mine',
        { statusCode: 204, error: null, durationMs: 1, startedAt: performance.now() },
        { kind: 'delivered' },
        1000,
      );
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 0, claim: 'c1' }]);
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toHaveLength(1);
    });

    it('disables the subscription on a 410 Gone and holds what else is pending', async () => {
      const claimed = await claimOne();
      await pendingDelivery(1n, 12n, 60_000);
      await expect(
        webhooks.recordAttempt(
          claimed,
          'c1',
          { statusCode: 410, error: null, durationMs: 1, startedAt: performance.now() },
          { kind: 'disable', reason: 'gone' },
          1000,
        ),
      ).resolves.toEqual({ disabled: true });
      await expect(deliveryStates(1n)).resolves.toEqual([
        { state: 'failed', attempts: 1, claim: null },
        { state: 'held', attempts: 0, claim: null },
      ]);
      await expect(webhooks.listSubscriptions('alice')).resolves.toMatchObject([
        { disabledAt: expect.any(Number), disabledReason: 'gone' },
      ]);
    });

    it('disables a subscription that kept failing for the whole disable-after time without a success', async () => {
      const claimed = await claimOne();
      // No time at all: the first failure has been failing "long enough".
      await expect(
        webhooks.recordAttempt(
          claimed,
          'c1',
          { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() },
          retry(),
          0,
        ),
      ).resolves.toEqual({
        disabled: true,
      });
      await expect(webhooks.listSubscriptions('alice')).resolves.toMatchObject([
        { disabledReason: 'deliveries failed for 0ms without a success' },
      ]);
    });

    it('stops the failure clock on a success', async () => {
      const claimed = await claimOne();
      await webhooks.recordAttempt(
        claimed,
        'c1',
        { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() },
        retry(-1000),
        3_600_000,
      );
      const [again] = await claimedBy(1, LEASE, 'c2');
      await webhooks.recordAttempt(
        again,
        'c2',
        { statusCode: 200, error: null, durationMs: 1, startedAt: performance.now() },
        { kind: 'delivered' },
        3_600_000,
      );
      const [row] = (await db.dataSource.query('SELECT failing_since FROM webhook_subscriptions WHERE id = ?', [
        1n,
      ])) as {
        failing_since: unknown;
      }[];
      expect(row.failing_since).toBeNull();
    });

    it('records no attempt when none was made (nothing sent), only the delivery’s new state', async () => {
      const claimed = await claimOne();
      await webhooks.recordAttempt(
        claimed,
        'c1',
        { statusCode: null, error: null, durationMs: 0, startedAt: performance.now() },
        { kind: 'failed' },
        1000,
      );
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toEqual([]);
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'failed', attempts: 0, claim: null }]);
    });
  });

  describe('recordAttempts', () => {
    const ok = { statusCode: 204, error: null, durationMs: 1, startedAt: performance.now() };
    const failing = { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() };
    const failingSince = async (id: bigint) =>
      (
        (await db.dataSource.query('SELECT failing_since FROM webhook_subscriptions WHERE id = ?', [id])) as {
          failing_since: unknown;
        }[]
      )[0].failing_since;

    async function claimMany(count: number): Promise<ClaimedDelivery[]> {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      for (let i = 0; i < count; i++) await pendingDelivery(i % 2 === 0 ? 1n : 2n, BigInt(100 + i));
      return claimedBy(count, LEASE, 'c1');
    }

    it('records a batch of outcomes of several subscriptions in one call, each delivery as its own outcome says', async () => {
      const [a1, b1, a2, b2] = await claimMany(4);
      const disabled = await webhooks.recordAttempts(
        'c1',
        [
          { delivery: a1, attempt: ok, outcome: { kind: 'delivered' } },
          { delivery: b1, attempt: failing, outcome: retry() },
          { delivery: a2, attempt: ok, outcome: { kind: 'delivered' } },
          { delivery: b2, attempt: failing, outcome: { kind: 'failed' } },
        ],
        3_600_000,
      );
      expect(disabled).toEqual(new Set());
      await expect(deliveryStates(1n)).resolves.toEqual([
        { state: 'delivered', attempts: 1, claim: null },
        { state: 'delivered', attempts: 1, claim: null },
      ]);
      await expect(deliveryStates(2n)).resolves.toEqual([
        { state: 'pending', attempts: 1, claim: null },
        { state: 'failed', attempts: 1, claim: null },
      ]);
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toHaveLength(2);
      await expect(webhooks.recentAttempts(2n, 10)).resolves.toMatchObject([{ statusCode: 500 }, { statusCode: 500 }]);
      expect(await failingSince(1n)).toBeNull();
      expect(await failingSince(2n)).not.toBeNull();
    });

    it('judges the failure clock by the order outcomes came in: a failure after a success starts it, a success after a failure stops it', async () => {
      const [a1, b1, a2, b2] = await claimMany(4);
      await webhooks.recordAttempts(
        'c1',
        [
          { delivery: a1, attempt: ok, outcome: { kind: 'delivered' } },
          { delivery: a2, attempt: failing, outcome: retry() },
          { delivery: b1, attempt: failing, outcome: retry() },
          { delivery: b2, attempt: ok, outcome: { kind: 'delivered' } },
        ],
        3_600_000,
      );
      expect(await failingSince(1n)).not.toBeNull();
      expect(await failingSince(2n)).toBeNull();
    });

    it('disables only the subscription that answered 410, with the rest of the batch recorded', async () => {
      const [a1, b1] = await claimMany(2);
      const disabled = await webhooks.recordAttempts(
        'c1',
        [
          { delivery: a1, attempt: { ...ok, statusCode: 410 }, outcome: { kind: 'disable', reason: 'gone' } },
          { delivery: b1, attempt: ok, outcome: { kind: 'delivered' } },
        ],
        3_600_000,
      );
      expect(disabled).toEqual(new Set([1n]));
      await expect(deliveryStates(2n)).resolves.toEqual([{ state: 'delivered', attempts: 1, claim: null }]);
    });

    it('keeps no attempt of a subscription deleted meanwhile, and still records the others', async () => {
      const [a1, b1] = await claimMany(2);
      await webhooks.deleteSubscription('bob', 2n);
      await webhooks.recordAttempts(
        'c1',
        [
          { delivery: a1, attempt: ok, outcome: { kind: 'delivered' } },
          { delivery: b1, attempt: ok, outcome: { kind: 'delivered' } },
        ],
        3_600_000,
      );
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toHaveLength(1);
      const attempts = (await db.dataSource.query('SELECT COUNT(*) AS n FROM webhook_attempts')) as { n: unknown }[];
      expect(Number(attempts[0].n)).toBe(1);
    });
  });

  describe('recentAttempts', () => {
    it('gives the newest attempts first, up to the limit', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      for (let attempt = 1; attempt <= 3; attempt++) {
        const [claimed] = await claimedBy(1, LEASE, `c${attempt}`);
        await webhooks.recordAttempt(
          claimed,
          `c${attempt}`,
          { statusCode: 500, error: null, durationMs: attempt, startedAt: performance.now() },
          retry(-1000),
          3_600_000,
        );
      }
      await expect(webhooks.recentAttempts(1n, 2)).resolves.toMatchObject([{ attempt: 3 }, { attempt: 2 }]);
    });
  });

  describe('changing a subscription', () => {
    it('changes what it is given, clears a description with null, and leaves the rest', async () => {
      await webhooks.insertSubscription(subscription(1n, { description: 'old' }), 10);
      await expect(
        webhooks.updateSubscription('alice', 1n, { url: 'https://example.com/new', events: ['plant.deleted'] }),
      ).resolves.toMatchObject({
        id: 1n,
        url: 'https://example.com/new',
        events: ['plant.deleted'],
        description: 'old',
      });
      await expect(webhooks.updateSubscription('alice', 1n, { description: null })).resolves.toMatchObject({
        url: 'https://example.com/new',
        description: null,
      });
      await expect(webhooks.updateSubscription('alice', 1n, {})).resolves.toMatchObject({ description: null });
      await expect(webhooks.updateSubscription('bob', 1n, { description: 'mine' })).resolves.toBeUndefined();
    });

    it('disables it holding what is pending, and re-enables it with its failure clock stopped', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      await db.dataSource.query('UPDATE webhook_subscriptions SET failing_since = 5 WHERE id = 1');
      await expect(webhooks.updateSubscription('alice', 1n, { enabled: false })).resolves.toMatchObject({
        disabledAt: expect.any(Number),
        disabledReason: DISABLED_BY_ITS_USER,
      });
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'held', attempts: 0, claim: null }]);
      // Disabled again: it keeps when and why it was first.
      const [first] = await webhooks.listSubscriptions('alice');
      await db.dataSource.query("UPDATE webhook_subscriptions SET disabled_reason = 'gone' WHERE id = 1");
      await expect(webhooks.updateSubscription('alice', 1n, { enabled: false })).resolves.toMatchObject({
        disabledAt: first.disabledAt,
        disabledReason: 'gone',
      });
      await expect(webhooks.updateSubscription('alice', 1n, { enabled: true })).resolves.toMatchObject({
        disabledAt: null,
        disabledReason: null,
      });
      await expect(
        db.dataSource.query('SELECT failing_since FROM webhook_subscriptions WHERE id = 1'),
      ).resolves.toEqual([{ failing_since: null }]);
      // What was held stays held until it is recovered.
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'held', attempts: 0, claim: null }]);
    });
  });

  describe('rotating the secret', () => {
    it('keeps the replaced secret signing for the grace period, and only the last one replaced', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      const rotated = await webhooks.rotateSecret('alice', 1n, 'sealed-second', 3_600_000);
      expect(rotated?.previousSecretExpiresAt).toBeGreaterThan(Date.now() + 3_500_000);
      await expect(webhooks.sendingTarget('alice', 1n)).resolves.toEqual({
        key: 1n,
        id: 1n,
        url: 'https://example.com/hooks/1',
        sealedSecrets: ['sealed-second', 'sealed-1'],
      });
      await webhooks.rotateSecret('alice', 1n, 'sealed-third', 3_600_000);
      await expect(webhooks.sendingTarget('alice', 1n)).resolves.toMatchObject({
        sealedSecrets: ['sealed-third', 'sealed-second'],
      });
      await pendingDelivery(1n, 11n);
      await expect(claimedBy(1, LEASE, 'c1')).resolves.toMatchObject([
        { sealedSecret: 'sealed-third', previousSealedSecret: 'sealed-second' },
      ]);
      await expect(webhooks.rotateSecret('bob', 1n, 'sealed-x', 0)).resolves.toBeUndefined();
    });

    it('retires the replaced secret at once with no grace, and once its grace is over', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await expect(webhooks.rotateSecret('alice', 1n, 'sealed-second', 0)).resolves.toMatchObject({
        previousSecretExpiresAt: null,
      });
      await expect(webhooks.sendingTarget('alice', 1n)).resolves.toMatchObject({ sealedSecrets: ['sealed-second'] });
      await webhooks.rotateSecret('alice', 1n, 'sealed-third', 60_000);
      await db.dataSource.query('UPDATE webhook_subscriptions SET previous_secret_expires_at = 1 WHERE id = 1');
      await expect(webhooks.sendingTarget('alice', 1n)).resolves.toMatchObject({ sealedSecrets: ['sealed-third'] });
      await expect(webhooks.listSubscriptions('alice')).resolves.toMatchObject([{ previousSecretExpiresAt: null }]);
      await pendingDelivery(1n, 11n);
      await expect(claimedBy(1, LEASE, 'c1')).resolves.toMatchObject([{ previousSealedSecret: null }]);
    });

    it('lists the replaced secrets that still sign and are not under a prefix, and reseals one only if unchanged', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n), 10);
      await webhooks.insertSubscription(subscription(3n), 10);
      await webhooks.rotateSecret('alice', 1n, 'v1.new.1', 60_000);
      await webhooks.rotateSecret('alice', 2n, 'v1.new.2', 60_000);
      await webhooks.rotateSecret('alice', 3n, 'v1.new.3', 60_000);
      await db.dataSource.query('UPDATE webhook_subscriptions SET previous_secret_expires_at = 1 WHERE id = 3');
      await expect(webhooks.previousSecretsNotStartingWith('v1.new.', undefined, 10)).resolves.toEqual([
        { id: 1n, secret: 'sealed-1' },
        { id: 2n, secret: 'sealed-2' },
      ]);
      await expect(webhooks.previousSecretsNotStartingWith('v1.new.', 1n, 10)).resolves.toEqual([
        { id: 2n, secret: 'sealed-2' },
      ]);
      await expect(webhooks.replacePreviousSecret(1n, 'sealed-1', 'v1.new.old-1')).resolves.toBe(true);
      await expect(webhooks.replacePreviousSecret(2n, 'changed', 'v1.new.old-2')).resolves.toBe(false);
      await expect(webhooks.previousSecretsNotStartingWith('v1.new.', undefined, 10)).resolves.toEqual([
        { id: 2n, secret: 'sealed-2' },
      ]);
    });
  });

  describe('claiming fairly', () => {
    const claimedOf = (claimed: ClaimedDelivery[]) => claimed.map((d) => Number(d.subscriptionId));

    it('deals the slots among the subscriptions with something due, whatever the backlog of one', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      // Subscription 1's backlog is older than anything of 2's.
      for (let plant = 1n; plant <= 10n; plant++) await pendingDelivery(1n, plant, -10_000);
      await pendingDelivery(2n, 100n, -1000);
      await pendingDelivery(2n, 101n, -1000);
      const { deliveries, more } = await webhooks.claimDue(4, LEASE, 'c1');
      expect(claimedOf(deliveries).sort()).toEqual([1, 1, 2, 2]);
      expect(deliveries.find((d) => d.subscriptionId === 2n)).toMatchObject({
        owner: 'bob',
        eventId: null,
        retryFrom: 0,
      });
      expect(more).toBe(true);
    });

    it('claims no more for a subscription or an owner than their room, and says when more is due', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n), 10);
      await webhooks.insertSubscription(subscription(3n, { owner: 'bob' }), 10);
      for (let plant = 1n; plant <= 5n; plant++) {
        await pendingDelivery(1n, plant, -10_000);
        await pendingDelivery(2n, plant, -9_000);
      }
      await pendingDelivery(3n, 9n);
      const room = {
        subscription: (id: bigint) => (id === 1n ? 1 : 10),
        owner: (owner: string) => (owner === 'alice' ? 3 : 10),
      };
      const { deliveries, more } = await webhooks.claimDue(100, LEASE, 'c1', room);
      expect(claimedOf(deliveries).sort()).toEqual([1, 2, 2, 3]);
      expect(more).toBe(false);
      await expect(webhooks.claimDue(100, LEASE, 'c2', { subscription: () => 0, owner: () => 100 })).resolves.toEqual({
        deliveries: [],
        more: false,
      });
    });

    it('shares slots in turn, waiting longest first, within each room', () => {
      const room = {
        subscription: (id: bigint) => (id === 3n ? 1 : 5),
        owner: (owner: string) => (owner === 'o' ? 3 : 9),
      };
      const due = [
        { id: 1n, owner: 'o' },
        { id: 2n, owner: 'o' },
        { id: 3n, owner: 'p' },
        { id: 4n, owner: 'p' },
      ];
      expect(shareSlots(due, 7, room).map(({ id, slots }) => [id, slots])).toEqual([
        [1n, 2],
        [2n, 1],
        [3n, 1],
        [4n, 3],
      ]);
      expect(shareSlots(due, 2, room).map(({ id, slots }) => [id, slots])).toEqual([
        [1n, 1],
        [2n, 1],
      ]);
    });

    (name === 'mysql' ? it : it.skip)(
      'finds the subscriptions with something due reading one index entry each (a loose index scan)',
      async () => {
        await webhooks.insertSubscription(subscription(1n), 10);
        for (let plant = 1n; plant <= 50n; plant++) await pendingDelivery(1n, plant);
        await db.dataSource.query('ANALYZE TABLE webhook_deliveries');
        const sql = db.get(Database).sql(DUE_SUBSCRIPTIONS);
        const plan = (await db.dataSource.query(`EXPLAIN ${sql}`, [65])) as Record<string, unknown>[];
        expect(plan.find((row) => row.table === 'd')).toMatchObject({ key: 'IDX_webhook_deliveries_claimable' });
        expect(String(plan.find((row) => row.table === 'd')?.Extra)).toMatch(/Using index for group-by/);
      },
    );
  });

  describe('resending', () => {
    /** A delivery of subscription 1 recorded with an event, ended as `state` after `attempts`. */
    async function ended(state: string, attempts: number): Promise<bigint> {
      await webhooks.recordEvents('alice', [{ type: 'plant.created', data: dataOf(11n) }]);
      await db.dataSource.query('UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = 5', [
        state,
        attempts,
      ]);
      const [row] = (await db.dataSource.query('SELECT event_id FROM webhook_deliveries')) as { event_id: unknown }[];
      return BigInt(String(row.event_id));
    }
    const due = async () =>
      (
        (await db.dataSource.query(
          'SELECT state, attempts, retry_from, claim, next_attempt_at FROM webhook_deliveries',
        )) as Record<string, unknown>[]
      ).map((row) => ({
        state: row.state,
        attempts: Number(row.attempts),
        retryFrom: Number(row.retry_from),
        claim: row.claim,
        dueNow: Number(row.next_attempt_at) > 5 && Number(row.next_attempt_at) <= Date.now() + 1000,
      }));

    it.each(['failed', 'delivered', 'held'])(
      'puts a %s delivery back in the queue, its schedule anew',
      async (state) => {
        await webhooks.insertSubscription(subscription(1n), 10);
        const eventId = await ended(state, 3);
        await expect(webhooks.resend(1n, { eventId })).resolves.toEqual({ found: true, type: 'plant.created' });
        await expect(due()).resolves.toEqual([
          { state: 'pending', attempts: 3, retryFrom: 3, claim: null, dueNow: true },
        ]);
        await expect(claimedBy(1, LEASE, 'c1')).resolves.toMatchObject([{ eventId, attempts: 3, retryFrom: 3 }]);
      },
    );

    /** A delivery of subscription 1, with an event, claimed by `c1` and so being attempted. */
    async function underWay(): Promise<{ eventId: bigint; claimed: ClaimedDelivery }> {
      await webhooks.insertSubscription(subscription(1n), 10);
      const eventId = await ended('pending', 0);
      await db.dataSource.query('UPDATE webhook_deliveries SET next_attempt_at = 1');
      const [claimed] = await claimedBy(1, LEASE, 'c1');
      expect(claimed.eventId).toBe(eventId);
      return { eventId, claimed };
    }
    const made = (statusCode: number) => ({ statusCode, error: null, durationMs: 1, startedAt: performance.now() });

    it.each([
      ['delivered', 204, { kind: 'delivered' as const }],
      ['to be retried', 500, retry()],
      ['failed for good', 500, { kind: 'failed' as const }],
    ])(
      'sends one being attempted once more after that attempt, ended %s, with the next attempt number',
      async (_label, statusCode, outcome) => {
        const { eventId, claimed } = await underWay();
        await expect(webhooks.resend(1n, { eventId })).resolves.toEqual({ found: true, type: 'plant.created' });
        // Still its attempt's: nobody claims it beside that attempt.
        await expect(due()).resolves.toEqual([
          { state: 'pending', attempts: 0, retryFrom: 0, claim: 'c1', dueNow: false },
        ]);
        await expect(claimedBy(1, LEASE, 'c2')).resolves.toEqual([]);
        // Its outcome is recorded; the delivery is due again at once, its schedule counted from there.
        await webhooks.recordAttempt(claimed, 'c1', made(statusCode), outcome, 3_600_000);
        await expect(due()).resolves.toEqual([
          { state: 'pending', attempts: 1, retryFrom: 1, claim: null, dueNow: true },
        ]);
        const [again] = await claimedBy(1, LEASE, 'c2');
        expect(again).toMatchObject({ eventId, attempts: 1, retryFrom: 1 });
        await webhooks.recordAttempt(again, 'c2', made(204), { kind: 'delivered' }, 3_600_000);
        await expect(due()).resolves.toMatchObject([{ state: 'delivered', attempts: 2, claim: null }]);
        await expect(webhooks.recentAttempts(1n, 10)).resolves.toMatchObject([
          { eventId, attempt: 2, statusCode: 204 },
          { eventId, attempt: 1, statusCode },
        ]);
      },
    );

    it('sends it once, however many resends came while its attempt was under way', async () => {
      const { eventId, claimed } = await underWay();
      await webhooks.resend(1n, { eventId });
      await webhooks.resend(1n, { eventId });
      await webhooks.recordAttempt(claimed, 'c1', made(204), { kind: 'delivered' }, 3_600_000);
      const [again] = await claimedBy(1, LEASE, 'c2');
      await webhooks.recordAttempt(again, 'c2', made(204), { kind: 'delivered' }, 3_600_000);
      await expect(due()).resolves.toMatchObject([{ state: 'delivered', attempts: 2 }]);
      await expect(claimedBy(1, LEASE, 'c3')).resolves.toEqual([]);
    });

    it('holds one whose attempt disabled its subscription, the resend with it', async () => {
      const { eventId, claimed } = await underWay();
      await webhooks.resend(1n, { eventId });
      await webhooks.recordAttempt(claimed, 'c1', made(410), { kind: 'disable', reason: 'gone' }, 3_600_000);
      await expect(due()).resolves.toMatchObject([{ state: 'held', attempts: 1, claim: null }]);
      await expect(
        db.dataSource
          .query('SELECT resend_after_attempt FROM webhook_deliveries')
          .then((rows) => (rows as { resend_after_attempt: unknown }[]).map((row) => Number(row.resend_after_attempt))),
      ).resolves.toEqual([0]);
    });

    it('gives one whose attempt ended without an outcome (its instance died) to the next claim, as the attempt after it', async () => {
      const { eventId, claimed } = await underWay();
      await webhooks.resend(1n, { eventId });
      // The lease runs out: due again for anyone, that claim's attempt being the one the resend asked for.
      await db.dataSource.query('UPDATE webhook_deliveries SET next_attempt_at = 1');
      const [again] = await claimedBy(1, LEASE, 'c2');
      expect(again).toMatchObject({ eventId, attempts: 0, retryFrom: 0 });
      // The first attempt's outcome, should it come after all, no longer counts for the delivery.
      await webhooks.recordAttempt(claimed, 'c1', made(204), { kind: 'delivered' }, 3_600_000);
      await webhooks.recordAttempt(again, 'c2', made(204), { kind: 'delivered' }, 3_600_000);
      await expect(due()).resolves.toMatchObject([{ state: 'delivered', attempts: 1, claim: null }]);
      await expect(claimedBy(1, LEASE, 'c3')).resolves.toEqual([]);
    });

    it('finds none of another subscription, nor of another event', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      const eventId = await ended('delivered', 1);
      await expect(webhooks.resend(2n, { eventId })).resolves.toEqual({ found: false });
      await expect(webhooks.resend(1n, { eventId: eventId + 1000n })).resolves.toEqual({ found: false });
      await expect(due()).resolves.toMatchObject([{ state: 'delivered' }]);
    });

    it('names a delivery recorded before events were by its own id, never by an event id', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      await db.dataSource.query("UPDATE webhook_deliveries SET state = 'failed'");
      const [row] = (await db.dataSource.query('SELECT id FROM webhook_deliveries')) as { id: unknown }[];
      const id = BigInt(String(row.id));
      await expect(webhooks.resend(1n, { eventId: id })).resolves.toEqual({ found: false });
      await expect(webhooks.resend(1n, { deliveryId: id })).resolves.toEqual({ found: true, type: 'plant.created' });
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 0, claim: null }]);
    });
  });

  describe('testing an endpoint', () => {
    it('lets one test of a subscription hold it at a time, until it ends or its lease does', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n), 10);
      const first = await webhooks.takeTestLease(1n, LEASE);
      expect(first).toBeGreaterThan(Date.now() + LEASE - 5000);
      await expect(webhooks.takeTestLease(1n, LEASE)).resolves.toBeUndefined();
      // Another subscription is tested apart.
      await expect(webhooks.takeTestLease(2n, LEASE)).resolves.toEqual(expect.any(Number));
      await webhooks.endTestLease(1n, first!);
      const second = await webhooks.takeTestLease(1n, -1000);
      expect(second).toEqual(expect.any(Number));
      // That one's lease is over (its instance died, say): the next test takes the subscription, and
      // the late end of the one before does not free it.
      const third = await webhooks.takeTestLease(1n, LEASE);
      expect(third).toEqual(expect.any(Number));
      await webhooks.endTestLease(1n, second!);
      await expect(webhooks.takeTestLease(1n, LEASE)).resolves.toBeUndefined();
      await webhooks.endTestLease(1n, third!);
      await expect(webhooks.takeTestLease(1n, LEASE)).resolves.toEqual(expect.any(Number));
    });
  });

  describe('recovering', () => {
    const states = async () =>
      (
        (await db.dataSource.query('SELECT data, state, retry_from FROM webhook_deliveries ORDER BY id')) as Record<
          string,
          unknown
        >[]
      ).map((row) => [row.data, row.state, row.retry_from === null ? null : Number(row.retry_from)]);

    it('puts back what failed or was held since a time, up to what was recorded when it started', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n), 10);
      for (let plant = 1n; plant <= 6n; plant++) await pendingDelivery(1n, plant);
      await pendingDelivery(2n, 7n);
      await db.dataSource.query(
        "UPDATE webhook_deliveries SET state = CASE WHEN data LIKE '%\"id\":2,%' THEN 'delivered' " +
          "WHEN data LIKE '%\"id\":3,%' THEN 'held' ELSE 'failed' END, attempts = 8, occurred_at = 2000",
      );
      await db.dataSource.query('UPDATE webhook_deliveries SET occurred_at = 1000 WHERE data LIKE \'%"id":1,%\'');
      await webhooks.startRecovery(1n, 1500);
      // Recorded after the recovery started: not part of it.
      await pendingDelivery(1n, 8n);
      await db.dataSource.query("UPDATE webhook_deliveries SET state = 'failed' WHERE data LIKE '%\"id\":8,%'");
      await expect(webhooks.recoverNext(16)).resolves.toBe(4);
      await expect(states()).resolves.toEqual([
        [dataOf(1n), 'failed', null],
        [dataOf(2n), 'delivered', null],
        [dataOf(3n), 'pending', 8],
        [dataOf(4n), 'pending', 8],
        [dataOf(5n), 'pending', 8],
        [dataOf(6n), 'pending', 8],
        [dataOf(7n), 'failed', null],
        [dataOf(8n), 'failed', null],
      ]);
      // Done: nothing more to do, and the subscription says so.
      await expect(webhooks.recoverNext(16)).resolves.toBe(0);
      await expect(
        db.dataSource.query('SELECT recover_through FROM webhook_subscriptions WHERE id = 1'),
      ).resolves.toEqual([{ recover_through: null }]);
    });

    it('waits while its subscription has a batch pending, and while it is disabled', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 1n);
      await db.dataSource.query("UPDATE webhook_deliveries SET state = 'failed'");
      await webhooks.startRecovery(1n, 0);
      await db.dataSource.query(
        'INSERT INTO webhook_deliveries (subscription_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
          `SELECT subscription_id, event_type, data, occurred_at, 'pending', 0, 1 FROM webhook_deliveries, (${Array.from(
            { length: RECOVER_BATCH },
            (_, i) => `SELECT ${i} AS n`,
          ).join(' UNION ALL ')}) copies`,
      );
      await expect(webhooks.recoverNext(16)).resolves.toBe(0);
      await db.dataSource.query("DELETE FROM webhook_deliveries WHERE state = 'pending'");
      await db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1');
      await expect(webhooks.recoverNext(16)).resolves.toBe(0);
      await db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = NULL');
      await expect(webhooks.recoverNext(16)).resolves.toBe(1);
    });

    it('has nothing to do for a subscription without deliveries', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.startRecovery(1n, 0);
      await expect(webhooks.recoverNext(16)).resolves.toBe(0);
    });
  });

  describe('what the metrics read', () => {
    it('tells the deliveries due and how long the one due longest has waited', async () => {
      await expect(webhooks.dueBacklog()).resolves.toEqual({ due: 0, oldestDueMs: 0 });
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n, -5000);
      await pendingDelivery(1n, 12n, -1000);
      await pendingDelivery(1n, 13n, 60_000);
      const { due, oldestDueMs } = await webhooks.dueBacklog();
      expect(due).toBe(2);
      // The rows were written with this clock, the age read with the database's.
      expect(oldestDueMs).toBeGreaterThanOrEqual(4500);
      expect(oldestDueMs).toBeLessThan(30_000);
      await claimedBy(10, LEASE, 'c1');
      await expect(webhooks.dueBacklog()).resolves.toEqual({ due: 0, oldestDueMs: 0 });
    });

    it('counts the subscriptions enabled and disabled, of every owner', async () => {
      await expect(webhooks.countSubscriptions()).resolves.toEqual({ enabled: 0, disabled: 0 });
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.insertSubscription(subscription(2n), 10);
      await webhooks.insertSubscription(subscription(3n, { owner: 'bob' }), 10);
      await db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1, disabled_reason = ? WHERE id = 2', [
        'gone',
      ]);
      await expect(webhooks.countSubscriptions()).resolves.toEqual({ enabled: 2, disabled: 1 });
    });
  });

  describe('prune', () => {
    it('forgets finished deliveries and attempts older than the retention, and keeps pending ones', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      const [claimed] = await claimedBy(1, LEASE, 'c1');
      await webhooks.recordAttempt(
        claimed,
        'c1',
        { statusCode: 200, error: null, durationMs: 1, startedAt: performance.now() },
        { kind: 'delivered' },
        1000,
      );
      await pendingDelivery(1n, 12n, -3_600_000);
      await webhooks.prune(3_600_000);
      await expect(deliveryStates(1n)).resolves.toHaveLength(2);
      await webhooks.prune(-1000);
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 0, claim: null }]);
      await expect(webhooks.recentAttempts(1n, 10)).resolves.toEqual([]);
    });

    it('forgets events that occurred longer ago than the retention', async () => {
      await webhooks.insertSubscription(subscription(1n), 10);
      await webhooks.recordEvents('alice', [{ type: 'plant.deleted', data: '{"id":1}' }]);
      await webhooks.recordEvents('alice', [{ type: 'plant.deleted', data: '{"id":2}' }]);
      await db.dataSource.query(`UPDATE webhook_events SET occurred_at = 1 WHERE data = '{"id":1}'`);
      await webhooks.prune(3_600_000);
      await expect(webhooks.listEvents('alice', { limit: 10, order: 'asc' })).resolves.toMatchObject([
        { data: '{"id":2}' },
      ]);
    });
  });
});
