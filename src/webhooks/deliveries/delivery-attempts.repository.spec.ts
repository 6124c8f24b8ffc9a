import { ClaimedDelivery } from './claims';
import { RECOVER_BATCH } from '../webhooks.limits';
import { testDatabases } from '../../../test/utils/databases';
import { dataOf, LEASE, retry, subscription, webhookTables } from '../../../test/utils/webhook-tables';

describe.each(testDatabases())(`DeliveriesRepository, recording attempts, on %s`, (name) => {
  const tables = webhookTables(name);
  const { pendingDelivery, deliveryStates, claimedBy } = tables;

  describe('recordAttempt', () => {
    async function claimOne(): Promise<ClaimedDelivery> {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      const [claimed] = await claimedBy(1, LEASE, 'c1');
      return claimed;
    }

    it('records a success: the attempt, and the delivery delivered', async () => {
      const claimed = await claimOne();
      await expect(
        tables.deliveries.recordAttempt(
          claimed,
          'c1',
          { statusCode: 204, error: null, durationMs: 12.4, startedAt: performance.now() },
          { kind: 'delivered' },
          1000,
        ),
      ).resolves.toEqual({ disabled: false });
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'delivered', attempts: 1, claim: null }]);
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toEqual([
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
      await tables.deliveries.recordAttempt(
        claimed,
        'c1',
        { statusCode: 204, error: null, durationMs: 3000, startedAt: performance.now() - 3000 },
        { kind: 'delivered' },
        1000,
      );
      const after = Date.now();
      const [{ attemptedAt }] = await tables.deliveries.recentAttempts(1n, 10);
      expect(attemptedAt).toBeGreaterThanOrEqual(before - 3000 - 50);
      expect(attemptedAt).toBeLessThanOrEqual(after - 3000 + 50);
    });

    it('puts a failed delivery back as pending, due after the delay', async () => {
      const claimed = await claimOne();
      await tables.deliveries.recordAttempt(
        claimed,
        'c1',
        { statusCode: null, error: 'timeout', durationMs: 5, startedAt: performance.now() },
        retry(),
        3_600_000,
      );
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 1, claim: null }]);
      await expect(tables.deliveries.dueBacklog()).resolves.toMatchObject({ due: 0 });
      const [again] = await claimedBy(1, LEASE, 'c2');
      expect(again).toBeUndefined();
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toMatchObject([{ disabledAt: null }]);
    });

    it('marks a delivery with no attempts left failed', async () => {
      const claimed = await claimOne();
      await tables.deliveries.recordAttempt(
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
      await tables.deliveries.recordAttempt(
        claimed,
        'not-mine',
        { statusCode: 204, error: null, durationMs: 1, startedAt: performance.now() },
        { kind: 'delivered' },
        1000,
      );
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'pending', attempts: 0, claim: 'c1' }]);
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toHaveLength(1);
    });

    it('disables the subscription on a 410 Gone and holds what else is pending', async () => {
      const claimed = await claimOne();
      await pendingDelivery(1n, 12n, 60_000);
      await expect(
        tables.deliveries.recordAttempt(
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
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toMatchObject([
        { disabledAt: expect.any(Number), disabledReason: 'gone' },
      ]);
    });

    it('disables a subscription that kept failing for the whole disable-after time without a success', async () => {
      const claimed = await claimOne();
      // No time at all: the first failure has been failing "long enough".
      await expect(
        tables.deliveries.recordAttempt(
          claimed,
          'c1',
          { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() },
          retry(),
          0,
        ),
      ).resolves.toEqual({
        disabled: true,
      });
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toMatchObject([
        { disabledReason: 'deliveries failed for 0ms without a success' },
      ]);
    });

    it('stops the failure clock on a success', async () => {
      const claimed = await claimOne();
      await tables.deliveries.recordAttempt(
        claimed,
        'c1',
        { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() },
        retry(-1000),
        3_600_000,
      );
      const [again] = await claimedBy(1, LEASE, 'c2');
      await tables.deliveries.recordAttempt(
        again,
        'c2',
        { statusCode: 200, error: null, durationMs: 1, startedAt: performance.now() },
        { kind: 'delivered' },
        3_600_000,
      );
      const [row] = (await tables.db.dataSource.query('SELECT failing_since FROM webhook_subscriptions WHERE id = ?', [
        1n,
      ])) as {
        failing_since: unknown;
      }[];
      expect(row.failing_since).toBeNull();
    });

    it('records no attempt when none was made (nothing sent), only the delivery’s new state', async () => {
      const claimed = await claimOne();
      await tables.deliveries.recordAttempt(
        claimed,
        'c1',
        { statusCode: null, error: null, durationMs: 0, startedAt: performance.now() },
        { kind: 'failed' },
        1000,
      );
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toEqual([]);
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'failed', attempts: 0, claim: null }]);
    });
  });

  describe('recordAttempts', () => {
    const ok = { statusCode: 204, error: null, durationMs: 1, startedAt: performance.now() };
    const failing = { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() };
    const failingSince = async (id: bigint) =>
      (
        (await tables.db.dataSource.query('SELECT failing_since FROM webhook_subscriptions WHERE id = ?', [id])) as {
          failing_since: unknown;
        }[]
      )[0].failing_since;

    async function claimMany(count: number): Promise<ClaimedDelivery[]> {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      for (let i = 0; i < count; i++) await pendingDelivery(i % 2 === 0 ? 1n : 2n, BigInt(100 + i));
      return claimedBy(count, LEASE, 'c1');
    }

    it('records a batch of outcomes of several subscriptions in one call, each delivery as its own outcome says', async () => {
      const [a1, b1, a2, b2] = await claimMany(4);
      const disabled = await tables.deliveries.recordAttempts(
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
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toHaveLength(2);
      await expect(tables.deliveries.recentAttempts(2n, 10)).resolves.toMatchObject([
        { statusCode: 500 },
        { statusCode: 500 },
      ]);
      expect(await failingSince(1n)).toBeNull();
      expect(await failingSince(2n)).not.toBeNull();
    });

    it('judges the failure clock by the order outcomes came in: a failure after a success starts it, a success after a failure stops it', async () => {
      const [a1, b1, a2, b2] = await claimMany(4);
      await tables.deliveries.recordAttempts(
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
      const disabled = await tables.deliveries.recordAttempts(
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
      await tables.subscriptions.deleteSubscription('bob', 2n);
      await tables.deliveries.recordAttempts(
        'c1',
        [
          { delivery: a1, attempt: ok, outcome: { kind: 'delivered' } },
          { delivery: b1, attempt: ok, outcome: { kind: 'delivered' } },
        ],
        3_600_000,
      );
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toHaveLength(1);
      const attempts = (await tables.db.dataSource.query('SELECT COUNT(*) AS n FROM webhook_attempts')) as {
        n: unknown;
      }[];
      expect(Number(attempts[0].n)).toBe(1);
    });
  });

  describe('recovering', () => {
    const states = async () =>
      (
        (await tables.db.dataSource.query(
          'SELECT data, state, retry_from FROM webhook_deliveries ORDER BY id',
        )) as Record<string, unknown>[]
      ).map((row) => [row.data, row.state, row.retry_from === null ? null : Number(row.retry_from)]);

    it('puts back what failed or was held since a time, up to what was recorded when it started', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n), 10);
      for (let plant = 1n; plant <= 6n; plant++) await pendingDelivery(1n, plant);
      await pendingDelivery(2n, 7n);
      await tables.db.dataSource.query(
        "UPDATE webhook_deliveries SET state = CASE WHEN data LIKE '%\"id\":2,%' THEN 'delivered' " +
          "WHEN data LIKE '%\"id\":3,%' THEN 'held' ELSE 'failed' END, attempts = 8, occurred_at = 2000",
      );
      await tables.db.dataSource.query(
        'UPDATE webhook_deliveries SET occurred_at = 1000 WHERE data LIKE \'%"id":1,%\'',
      );
      await tables.deliveries.startRecovery(1n, 1500);
      // Recorded after the recovery started: not part of it.
      await pendingDelivery(1n, 8n);
      await tables.db.dataSource.query("UPDATE webhook_deliveries SET state = 'failed' WHERE data LIKE '%\"id\":8,%'");
      await expect(tables.deliveries.recoverNext(16)).resolves.toBe(4);
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
      await expect(tables.deliveries.recoverNext(16)).resolves.toBe(0);
      await expect(
        tables.db.dataSource.query('SELECT recover_through FROM webhook_subscriptions WHERE id = 1'),
      ).resolves.toEqual([{ recover_through: null }]);
    });

    it('waits while its subscription has a batch pending, and while it is disabled', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 1n);
      await tables.db.dataSource.query("UPDATE webhook_deliveries SET state = 'failed'");
      await tables.deliveries.startRecovery(1n, 0);
      await tables.db.dataSource.query(
        'INSERT INTO webhook_deliveries (subscription_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
          `SELECT subscription_id, event_type, data, occurred_at, 'pending', 0, 1 FROM webhook_deliveries, (${Array.from(
            { length: RECOVER_BATCH },
            (_, i) => `SELECT ${i} AS n`,
          ).join(' UNION ALL ')}) copies`,
      );
      await expect(tables.deliveries.recoverNext(16)).resolves.toBe(0);
      await tables.db.dataSource.query("DELETE FROM webhook_deliveries WHERE state = 'pending'");
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1');
      await expect(tables.deliveries.recoverNext(16)).resolves.toBe(0);
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = NULL');
      await expect(tables.deliveries.recoverNext(16)).resolves.toBe(1);
    });

    it('has nothing to do for a subscription without deliveries', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.deliveries.startRecovery(1n, 0);
      await expect(tables.deliveries.recoverNext(16)).resolves.toBe(0);
    });
  });
});
