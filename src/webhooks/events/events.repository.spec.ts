import { WebhookEvent } from './events';
import { testDatabases } from '../../../test/utils/databases';
import { subscription, webhookTables } from '../../../test/utils/webhook-tables';

describe.each(testDatabases())(`EventsRepository on %s`, (name) => {
  const tables = webhookTables(name);

  describe('events', () => {
    const deliveries = async () =>
      (
        (await tables.db.dataSource.query(
          "SELECT subscription_id, event_type, data, state FROM webhook_deliveries WHERE state = 'pending' ORDER BY id",
        )) as { subscription_id: unknown; event_type: string; data: string; state: string }[]
      ).map((row) => [Number(row.subscription_id), row.event_type, row.data]);
    /** Whether a plant statement guarded by the condition would run: the condition alone, on the database. */
    const unwatched = async (owner: string, types: readonly WebhookEvent[]) => {
      const condition = tables.events.noSubscriptionWants(owner, types);
      const rows = (await tables.db.dataSource.query(
        `SELECT 1 AS yes FROM (SELECT 1 AS one) one WHERE ${condition.sql}`,
        [...condition.parameters],
      )) as unknown[];
      return rows.length === 1;
    };

    it('records a delivery for every enabled subscription of the owner that wants the event, and only those', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n, { events: ['plant.created'] }), 10);
      await tables.subscriptions.insertSubscription(subscription(2n, { events: ['plant.deleted'] }), 10);
      await tables.subscriptions.insertSubscription(subscription(3n), 10);
      await tables.subscriptions.insertSubscription(subscription(4n, { owner: 'bob' }), 10);
      await tables.subscriptions.insertSubscription(subscription(5n), 10);
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1 WHERE id = 5');
      await expect(
        tables.events.recordEvents('alice', [{ type: 'plant.created', data: '{"id":7,"name":"Fern"}' }]),
      ).resolves.toBe(3);
      await expect(deliveries()).resolves.toEqual([
        [1, 'plant.created', '{"id":7,"name":"Fern"}'],
        [3, 'plant.created', '{"id":7,"name":"Fern"}'],
      ]);
      // The disabled subscription's is held; all three carry the one event, recorded once.
      const rows = (await tables.db.dataSource.query(
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
      await tables.subscriptions.insertSubscription(subscription(1n, { events: ['plant.deleted'] }), 10);
      await expect(
        tables.events.recordEvents('alice', [{ type: 'plant.created', data: '{"id":7,"name":"Fern"}' }]),
      ).resolves.toBe(0);
      await expect(tables.events.recordEvents('bob', [{ type: 'plant.deleted', data: '{"id":7}' }])).resolves.toBe(0);
      await expect(tables.db.dataSource.query('SELECT id FROM webhook_events')).resolves.toEqual([]);
    });

    it("lists the owner's events by id, either way, a page at a time, by type and time", async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      for (let id = 1; id <= 5; id++) {
        const type = id % 2 === 0 ? 'plant.deleted' : 'plant.created';
        await tables.events.recordEvents('alice', [{ type, data: `{"id":${id}}` }]);
      }
      await tables.events.recordEvents('bob', [{ type: 'plant.created', data: '{"id":99}' }]);
      const all = await tables.events.listEvents('alice', { limit: 10, order: 'asc' });
      expect(all.map((event) => event.data)).toEqual([1, 2, 3, 4, 5].map((id) => `{"id":${id}}`));
      expect(all[0]).toEqual({
        id: expect.any(BigInt),
        type: 'plant.created',
        data: '{"id":1}',
        occurredAt: expect.any(Number),
      });
      // One more than the page, to tell that another follows.
      const newest = await tables.events.listEvents('alice', { limit: 2, order: 'desc' });
      expect(newest.map((event) => event.data)).toEqual(['{"id":5}', '{"id":4}', '{"id":3}']);
      const next = await tables.events.listEvents('alice', { limit: 2, order: 'desc', after: newest[1].id });
      expect(next.map((event) => event.data)).toEqual(['{"id":3}', '{"id":2}', '{"id":1}']);
      const after = await tables.events.listEvents('alice', { limit: 10, order: 'asc', after: all[2].id });
      expect(after.map((event) => event.data)).toEqual(['{"id":4}', '{"id":5}']);
      const deleted = await tables.events.listEvents('alice', { limit: 10, order: 'asc', types: ['plant.deleted'] });
      expect(deleted.map((event) => event.data)).toEqual(['{"id":2}', '{"id":4}']);
      await tables.db.dataSource.query('UPDATE webhook_events SET occurred_at = 1000 * id');
      const ids = all.map((event) => Number(event.id));
      const window = await tables.events.listEvents('alice', {
        limit: 10,
        order: 'asc',
        since: 1000 * ids[1],
        until: 1000 * ids[3],
      });
      expect(window.map((event) => event.data)).toEqual(['{"id":2}', '{"id":3}']);
    });

    it('tells a plant statement whether a subscription of the owner wants the event', async () => {
      await expect(unwatched('alice', ['plant.created'])).resolves.toBe(true);
      await tables.subscriptions.insertSubscription(subscription(1n, { events: ['plant.deleted'] }), 10);
      await expect(unwatched('alice', ['plant.created'])).resolves.toBe(true);
      await expect(unwatched('alice', ['plant.deleted'])).resolves.toBe(false);
      await expect(unwatched('bob', ['plant.deleted'])).resolves.toBe(true);
      // A disabled subscription still wants it: its deliveries are held, to be recovered.
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET disabled_at = 1 WHERE id = 1');
      await expect(unwatched('alice', ['plant.deleted'])).resolves.toBe(false);
    });

    it('forgets events that occurred longer ago than the retention', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.events.recordEvents('alice', [{ type: 'plant.deleted', data: '{"id":1}' }]);
      await tables.events.recordEvents('alice', [{ type: 'plant.deleted', data: '{"id":2}' }]);
      await tables.db.dataSource.query(`UPDATE webhook_events SET occurred_at = 1 WHERE data = '{"id":1}'`);
      await tables.events.prune(3_600_000);
      await expect(tables.events.listEvents('alice', { limit: 10, order: 'asc' })).resolves.toMatchObject([
        { data: '{"id":2}' },
      ]);
    });
  });
});
