import { ClaimedDelivery, shareSlots } from './claims';
import { Database, NOW_MS } from '../../database';
import { compileClaimStatements } from './claim-statements';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookSubscription } from '../subscriptions/webhook-subscription.entity';
import { testDatabases } from '../../../test/utils/databases';
import { dataOf, LEASE, retry, subscription, webhookTables } from '../../../test/utils/webhook-tables';

describe.each(testDatabases())(`DeliveriesRepository on %s`, (name) => {
  const tables = webhookTables(name);
  const { pendingDelivery, deliveryStates, claimedBy } = tables;

  describe('claimDue', () => {
    it('claims due deliveries with what sending them needs, oldest due first, up to the limit', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
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
      await expect(tables.deliveries.dueBacklog()).resolves.toMatchObject({ due: 1 });
    });

    it('leases what it claims: not due again for another claim until the lease ends', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      await expect(claimedBy(10, LEASE, 'c1')).resolves.toHaveLength(1);
      await expect(claimedBy(10, LEASE, 'c2')).resolves.toEqual([]);
      await expect(tables.deliveries.dueBacklog()).resolves.toMatchObject({ due: 0 });
      await pendingDelivery(1n, 12n);
      // A lease already over: the delivery is due again at once, as after a crashed instance.
      await expect(claimedBy(10, -1000, 'c3')).resolves.toHaveLength(1);
      await expect(claimedBy(10, LEASE, 'c4')).resolves.toMatchObject([{ data: dataOf(12n) }]);
    });
  });

  describe('claiming fairly', () => {
    const claimedOf = (claimed: ClaimedDelivery[]) => claimed.map((d) => Number(d.subscriptionId));

    it('deals the slots among the subscriptions with something due, whatever the backlog of one', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      // Subscription 1's backlog is older than anything of 2's.
      for (let plant = 1n; plant <= 10n; plant++) await pendingDelivery(1n, plant, -10_000);
      await pendingDelivery(2n, 100n, -1000);
      await pendingDelivery(2n, 101n, -1000);
      const { deliveries, more } = await tables.deliveries.claimDue(4, LEASE, 'c1');
      expect(claimedOf(deliveries).sort()).toEqual([1, 1, 2, 2]);
      expect(deliveries.find((d) => d.subscriptionId === 2n)).toMatchObject({
        owner: 'bob',
        eventId: null,
        retryFrom: 0,
      });
      expect(more).toBe(true);
    });

    it('claims no more for a subscription or an owner than their room, and says when more is due', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n), 10);
      await tables.subscriptions.insertSubscription(subscription(3n, { owner: 'bob' }), 10);
      for (let plant = 1n; plant <= 5n; plant++) {
        await pendingDelivery(1n, plant, -10_000);
        await pendingDelivery(2n, plant, -9_000);
      }
      await pendingDelivery(3n, 9n);
      const room = {
        subscription: (id: bigint) => (id === 1n ? 1 : 10),
        owner: (owner: string) => (owner === 'alice' ? 3 : 10),
      };
      const { deliveries, more } = await tables.deliveries.claimDue(100, LEASE, 'c1', room);
      expect(claimedOf(deliveries).sort()).toEqual([1, 2, 2, 3]);
      expect(more).toBe(false);
      await expect(
        tables.deliveries.claimDue(100, LEASE, 'c2', { subscription: () => 0, owner: () => 100 }),
      ).resolves.toEqual({
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
        await tables.subscriptions.insertSubscription(subscription(1n), 10);
        for (let plant = 1n; plant <= 50n; plant++) await pendingDelivery(1n, plant);
        await tables.db.dataSource.query('ANALYZE TABLE webhook_deliveries');
        const database = tables.db.get(Database);
        const { dueSubscriptions: sql } = compileClaimStatements(
          database.table(WebhookDelivery),
          database.table(WebhookSubscription),
          database.sql(NOW_MS),
          database.dialect,
        );
        const plan = (await tables.db.dataSource.query(`EXPLAIN ${sql}`, [65])) as Record<string, unknown>[];
        expect(plan.find((row) => row.table === 'd')).toMatchObject({ key: 'IDX_webhook_deliveries_claimable' });
        expect(String(plan.find((row) => row.table === 'd')?.Extra)).toMatch(/Using index for group-by/);
      },
    );
  });

  describe('recentAttempts', () => {
    it('gives the newest attempts first, up to the limit', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      for (let attempt = 1; attempt <= 3; attempt++) {
        const [claimed] = await claimedBy(1, LEASE, `c${attempt}`);
        await tables.deliveries.recordAttempt(
          claimed,
          `c${attempt}`,
          { statusCode: 500, error: null, durationMs: attempt, startedAt: performance.now() },
          retry(-1000),
          3_600_000,
        );
      }
      await expect(tables.deliveries.recentAttempts(1n, 2)).resolves.toMatchObject([{ attempt: 3 }, { attempt: 2 }]);
    });
  });

  describe('resending', () => {
    /** A delivery of subscription 1 recorded with an event, ended as `state` after `attempts`. */
    async function ended(state: string, attempts: number): Promise<bigint> {
      await tables.events.recordEvents('alice', [{ type: 'plant.created', data: dataOf(11n) }]);
      await tables.db.dataSource.query('UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = 5', [
        state,
        attempts,
      ]);
      const [row] = (await tables.db.dataSource.query('SELECT event_id FROM webhook_deliveries')) as {
        event_id: unknown;
      }[];
      return BigInt(String(row.event_id));
    }
    const due = async () =>
      (
        (await tables.db.dataSource.query(
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
        await tables.subscriptions.insertSubscription(subscription(1n), 10);
        const eventId = await ended(state, 3);
        await expect(tables.deliveries.resend(1n, { eventId })).resolves.toEqual({
          found: true,
          type: 'plant.created',
        });
        await expect(due()).resolves.toEqual([
          { state: 'pending', attempts: 3, retryFrom: 3, claim: null, dueNow: true },
        ]);
        await expect(claimedBy(1, LEASE, 'c1')).resolves.toMatchObject([{ eventId, attempts: 3, retryFrom: 3 }]);
      },
    );

    /** A delivery of subscription 1, with an event, claimed by `c1` and so being attempted. */
    async function underWay(): Promise<{ eventId: bigint; claimed: ClaimedDelivery }> {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      const eventId = await ended('pending', 0);
      await tables.db.dataSource.query('UPDATE webhook_deliveries SET next_attempt_at = 1');
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
        await expect(tables.deliveries.resend(1n, { eventId })).resolves.toEqual({
          found: true,
          type: 'plant.created',
        });
        // Still its attempt's: nobody claims it beside that attempt.
        await expect(due()).resolves.toEqual([
          { state: 'pending', attempts: 0, retryFrom: 0, claim: 'c1', dueNow: false },
        ]);
        await expect(claimedBy(1, LEASE, 'c2')).resolves.toEqual([]);
        // Its outcome is recorded; the delivery is due again at once, its schedule counted from there.
        await tables.deliveries.recordAttempt(claimed, 'c1', made(statusCode), outcome, 3_600_000);
        await expect(due()).resolves.toEqual([
          { state: 'pending', attempts: 1, retryFrom: 1, claim: null, dueNow: true },
        ]);
        const [again] = await claimedBy(1, LEASE, 'c2');
        expect(again).toMatchObject({ eventId, attempts: 1, retryFrom: 1 });
        await tables.deliveries.recordAttempt(again, 'c2', made(204), { kind: 'delivered' }, 3_600_000);
        await expect(due()).resolves.toMatchObject([{ state: 'delivered', attempts: 2, claim: null }]);
        await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toMatchObject([
          { eventId, attempt: 2, statusCode: 204 },
          { eventId, attempt: 1, statusCode },
        ]);
      },
    );

    it('sends it once, however many resends came while its attempt was under way', async () => {
      const { eventId, claimed } = await underWay();
      await tables.deliveries.resend(1n, { eventId });
      await tables.deliveries.resend(1n, { eventId });
      await tables.deliveries.recordAttempt(claimed, 'c1', made(204), { kind: 'delivered' }, 3_600_000);
      const [again] = await claimedBy(1, LEASE, 'c2');
      await tables.deliveries.recordAttempt(again, 'c2', made(204), { kind: 'delivered' }, 3_600_000);
      await expect(due()).resolves.toMatchObject([{ state: 'delivered', attempts: 2 }]);
      await expect(claimedBy(1, LEASE, 'c3')).resolves.toEqual([]);
    });

    it('holds one whose attempt disabled its subscription, the resend with it', async () => {
      const { eventId, claimed } = await underWay();
      await tables.deliveries.resend(1n, { eventId });
      await tables.deliveries.recordAttempt(claimed, 'c1', made(410), { kind: 'disable', reason: 'gone' }, 3_600_000);
      await expect(due()).resolves.toMatchObject([{ state: 'held', attempts: 1, claim: null }]);
      await expect(
        tables.db.dataSource
          .query('SELECT resend_after_attempt FROM webhook_deliveries')
          .then((rows) => (rows as { resend_after_attempt: unknown }[]).map((row) => Number(row.resend_after_attempt))),
      ).resolves.toEqual([0]);
    });

    it('gives one whose attempt ended without an outcome (its instance died) to the next claim, as the attempt after it', async () => {
      const { eventId, claimed } = await underWay();
      await tables.deliveries.resend(1n, { eventId });
      // The lease runs out: due again for anyone, that claim's attempt being the one the resend asked for.
      await tables.db.dataSource.query('UPDATE webhook_deliveries SET next_attempt_at = 1');
      const [again] = await claimedBy(1, LEASE, 'c2');
      expect(again).toMatchObject({ eventId, attempts: 0, retryFrom: 0 });
      // The first attempt's outcome, should it come after all, no longer counts for the delivery.
      await tables.deliveries.recordAttempt(claimed, 'c1', made(204), { kind: 'delivered' }, 3_600_000);
      await tables.deliveries.recordAttempt(again, 'c2', made(204), { kind: 'delivered' }, 3_600_000);
      await expect(due()).resolves.toMatchObject([{ state: 'delivered', attempts: 1, claim: null }]);
      await expect(claimedBy(1, LEASE, 'c3')).resolves.toEqual([]);
    });

    it('finds none of another subscription, nor of another event', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      const eventId = await ended('delivered', 1);
      await expect(tables.deliveries.resend(2n, { eventId })).resolves.toEqual({ found: false });
      await expect(tables.deliveries.resend(1n, { eventId: eventId + 1000n })).resolves.toEqual({ found: false });
      await expect(due()).resolves.toMatchObject([{ state: 'delivered' }]);
    });

    it('names a delivery recorded before events were by its own id, never by an event id', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      await tables.db.dataSource.query("UPDATE webhook_deliveries SET state = 'failed'");
      const [row] = (await tables.db.dataSource.query('SELECT id FROM webhook_deliveries')) as { id: unknown }[];
      const id = BigInt(String(row.id));
      await expect(tables.deliveries.resend(1n, { eventId: id })).resolves.toEqual({ found: false });
      await expect(tables.deliveries.resend(1n, { deliveryId: id })).resolves.toEqual({
        found: true,
        type: 'plant.created',
      });
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 0, claim: null }]);
    });
  });

  describe('what the metrics read', () => {
    it('tells the deliveries due and how long the one due longest has waited', async () => {
      await expect(tables.deliveries.dueBacklog()).resolves.toEqual({ due: 0, oldestDueMs: 0 });
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n, -5000);
      await pendingDelivery(1n, 12n, -1000);
      await pendingDelivery(1n, 13n, 60_000);
      const { due, oldestDueMs } = await tables.deliveries.dueBacklog();
      expect(due).toBe(2);
      // The rows were written with this clock, the age read with the database's.
      expect(oldestDueMs).toBeGreaterThanOrEqual(4500);
      expect(oldestDueMs).toBeLessThan(30_000);
      await claimedBy(10, LEASE, 'c1');
      await expect(tables.deliveries.dueBacklog()).resolves.toEqual({ due: 0, oldestDueMs: 0 });
    });

    it('counts the subscriptions enabled and disabled, of every owner', async () => {
      await expect(tables.subscriptions.countSubscriptions()).resolves.toEqual({ enabled: 0, disabled: 0 });
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n), 10);
      await tables.subscriptions.insertSubscription(subscription(3n, { owner: 'bob' }), 10);
      await tables.db.dataSource.query(
        'UPDATE webhook_subscriptions SET disabled_at = 1, disabled_reason = ? WHERE id = 2',
        ['gone'],
      );
      await expect(tables.subscriptions.countSubscriptions()).resolves.toEqual({ enabled: 2, disabled: 1 });
    });
  });

  describe('prune', () => {
    it('forgets finished deliveries and attempts older than the retention, and keeps pending ones', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      const [claimed] = await claimedBy(1, LEASE, 'c1');
      await tables.deliveries.recordAttempt(
        claimed,
        'c1',
        { statusCode: 200, error: null, durationMs: 1, startedAt: performance.now() },
        { kind: 'delivered' },
        1000,
      );
      await pendingDelivery(1n, 12n, -3_600_000);
      await tables.deliveries.prune(3_600_000);
      await expect(deliveryStates(1n)).resolves.toHaveLength(2);
      await tables.deliveries.prune(-1000);
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 0, claim: null }]);
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toEqual([]);
    });
  });
});
