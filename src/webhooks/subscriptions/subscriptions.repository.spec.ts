import { isUniqueViolation } from '../../database';
import { DISABLED_BY_ITS_USER } from './subscriptions.repository';
import { testDatabases } from '../../../test/utils/databases';
import { failureOf } from '../../../test/utils/repository-database';
import { LEASE, retry, subscription, webhookTables } from '../../../test/utils/webhook-tables';

describe.each(testDatabases())(`SubscriptionsRepository on %s`, (name) => {
  const tables = webhookTables(name);
  const { pendingDelivery, deliveryStates, claimedBy } = tables;

  describe('subscriptions', () => {
    it('inserts, lists in id order with their events, and tells whether one exists for the owner', async () => {
      await expect(
        tables.subscriptions.insertSubscription(
          subscription(2n, { events: ['plant.deleted'], description: 'sync' }),
          10,
        ),
      ).resolves.toBe(true);
      await expect(
        tables.subscriptions.insertSubscription(subscription(1n, { events: ['plant.created'] }), 10),
      ).resolves.toBe(true);
      await expect(tables.subscriptions.insertSubscription(subscription(3n, { owner: 'bob' }), 10)).resolves.toBe(true);
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toEqual([
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
      await expect(tables.subscriptions.findSubscription('alice', 1n)).resolves.toBe(1n);
      await expect(tables.subscriptions.findSubscription('alice', 3n)).resolves.toBeUndefined();
      await expect(tables.subscriptions.findSubscription('bob', 3n)).resolves.toBe(3n);
    });

    /** A subscription made before public ids: a 63-bit key, and the public id the migrations gave it. */
    const subscriptionWithKey = (key: bigint, publicId: bigint, owner = 'alice') =>
      tables.db.dataSource.query(
        'INSERT INTO webhook_subscriptions (id, public_id, owner, url, events, description, secret, created_at) ' +
          `VALUES (?, ?, ?, 'https://example.com/old', '["plant.created"]', NULL, 'sealed', 1)`,
        [key, publicId, owner],
      );
    it('shows a subscription by its public id, and finds it by that or by its key', async () => {
      const key = 5731960143207412291n;
      await subscriptionWithKey(key, 77n);
      await tables.subscriptions.insertSubscription(subscription(78n), 10);
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toMatchObject([{ id: 77n }, { id: 78n }]);
      await expect(tables.subscriptions.findSubscription('alice', 77n)).resolves.toBe(key);
      await expect(tables.subscriptions.findSubscription('alice', key)).resolves.toBe(key);
      await expect(tables.subscriptions.findSubscription('bob', key)).resolves.toBeUndefined();
      await pendingDelivery(key, 10n);
      await expect(tables.subscriptions.deleteSubscription('bob', 77n)).resolves.toBe(false);
      await expect(tables.subscriptions.deleteSubscription('alice', 77n)).resolves.toBe(true);
      await expect(deliveryStates(key)).resolves.toEqual([]);
      await subscriptionWithKey(key, 77n);
      await expect(tables.subscriptions.deleteSubscription('alice', key)).resolves.toBe(true);
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toMatchObject([{ id: 78n }]);
    });

    it('never gives one public id to two subscriptions', async () => {
      await tables.subscriptions.insertSubscription(subscription(9n), 10);
      await subscriptionWithKey(2n ** 60n, 10n);
      const taken = await failureOf(
        tables.db.dataSource.query('UPDATE webhook_subscriptions SET public_id = 9 WHERE id = ?', [2n ** 60n]),
      );
      expect(isUniqueViolation(taken)).toBe(true);
    });

    it('gives each new subscription the next feed version, and reads the owners after a version and those without one', async () => {
      const { owners: before, version: start } = await tables.subscriptions.ownersSince(-1n, 10);
      expect(before).toEqual([]);
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      const first = await tables.subscriptions.ownersSince(start, 10);
      expect(first).toEqual({ owners: ['alice'], version: expect.any(BigInt), full: false });
      expect(first.version).toBeGreaterThan(start);
      await tables.subscriptions.insertSubscription(subscription(2n, { owner: 'bob' }), 10);
      await expect(tables.subscriptions.ownersSince(first.version, 10)).resolves.toEqual({
        owners: ['bob'],
        version: first.version + 1n,
        full: false,
      });
      // One the release before the feed made during an upgrade: read by every poll, whatever it has read.
      await subscriptionWithKey(2n ** 60n, 90n, 'carol');
      const page = await tables.subscriptions.ownersSince(first.version + 1n, 10);
      expect(page).toEqual({ owners: ['carol'], version: first.version + 1n, full: false });
      expect((await tables.subscriptions.ownersSince(-1n, 10)).owners.sort()).toEqual(['alice', 'bob', 'carol']);
      expect(await tables.subscriptions.ownersSince(-1n, 3)).toMatchObject({ full: true });
      // A refused subscription takes no version.
      await expect(tables.subscriptions.insertSubscription(subscription(3n, { owner: 'bob' }), 1)).resolves.toBe(false);
      await expect(tables.subscriptions.ownersSince(first.version + 1n, 10)).resolves.toMatchObject({
        owners: ['carol'],
      });
      // A deleted subscription is gone from the read of every subscription, which then gives the
      // highest version left.
      await expect(tables.subscriptions.deleteSubscription('bob', 2n)).resolves.toBe(true);
      await expect(tables.subscriptions.ownersSince(-1n, 10)).resolves.toEqual({
        owners: expect.arrayContaining(['alice', 'carol']),
        version: first.version,
        full: false,
      });
      expect((await tables.subscriptions.ownersSince(-1n, 10)).owners).toHaveLength(2);
    });

    it('refuses a subscription beyond the per-owner limit, counting only the owner', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 2);
      await tables.subscriptions.insertSubscription(subscription(2n), 2);
      await expect(tables.subscriptions.insertSubscription(subscription(3n), 2)).resolves.toBe(false);
      await expect(tables.subscriptions.insertSubscription(subscription(4n, { owner: 'bob' }), 2)).resolves.toBe(true);
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toHaveLength(2);
    });

    it('refuses an id in use as a unique violation', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      const duplicate = await failureOf(
        tables.subscriptions.insertSubscription(subscription(1n, { owner: 'bob' }), 10),
      );
      expect(isUniqueViolation(duplicate)).toBe(true);
    });

    it('deletes the owner’s subscription with its deliveries and attempts; another owner’s is not found', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n), 10);
      await pendingDelivery(1n, 10n);
      await pendingDelivery(2n, 20n);
      const [claimed] = (await claimedBy(10, LEASE, 'c')).filter((d) => d.subscriptionId === 1n);
      await tables.deliveries.recordAttempt(
        claimed,
        'c',
        { statusCode: 500, error: null, durationMs: 1, startedAt: performance.now() },
        retry(),
        3_600_000,
      );
      await expect(tables.subscriptions.deleteSubscription('bob', 1n)).resolves.toBe(false);
      await expect(tables.subscriptions.deleteSubscription('alice', 1n)).resolves.toBe(true);
      await expect(tables.subscriptions.deleteSubscription('alice', 1n)).resolves.toBe(false);
      await expect(deliveryStates(1n)).resolves.toEqual([]);
      await expect(tables.deliveries.recentAttempts(1n, 10)).resolves.toEqual([]);
      await expect(deliveryStates(2n)).resolves.toHaveLength(1);
    });
  });

  describe('sealed secrets', () => {
    it('lists, in id order after a cursor, the secrets not under a prefix, and replaces one only if unchanged', async () => {
      const big = 9_223_372_036_854_775_807n;
      for (const [id, sealedSecret] of [
        [big, 'v1.old.c'],
        [5n, 'v1.new.b'],
        [3n, 'v1.old.a'],
        [7n, 'v1.other.d'],
      ] as const) {
        await tables.subscriptions.insertSubscription(
          subscription(id, { owner: `owner-${id}`, sealedSecret, createdAt: 1 }),
          10,
        );
      }
      await expect(tables.subscriptions.secretsNotStartingWith('v1.new.', undefined, 2)).resolves.toEqual([
        { id: 3n, secret: 'v1.old.a' },
        { id: 7n, secret: 'v1.other.d' },
      ]);
      await expect(tables.subscriptions.secretsNotStartingWith('v1.new.', 7n, 2)).resolves.toEqual([
        { id: big, secret: 'v1.old.c' },
      ]);

      await expect(tables.subscriptions.replaceSecret(3n, 'v1.stale.a', 'v1.new.x')).resolves.toBe(false);
      await expect(tables.subscriptions.replaceSecret(3n, 'v1.old.a', 'v1.new.a')).resolves.toBe(true);
      await expect(tables.subscriptions.replaceSecret(3n, 'v1.old.a', 'v1.new.y')).resolves.toBe(false);
      await expect(tables.subscriptions.secretsNotStartingWith('v1.new.', undefined, 10)).resolves.toEqual([
        { id: 7n, secret: 'v1.other.d' },
        { id: big, secret: 'v1.old.c' },
      ]);
    });
  });

  describe('changing a subscription', () => {
    it('changes what it is given, clears a description with null, and leaves the rest', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n, { description: 'old' }), 10);
      await expect(
        tables.subscriptions.updateSubscription('alice', 1n, {
          url: 'https://example.com/new',
          events: ['plant.deleted'],
        }),
      ).resolves.toMatchObject({
        id: 1n,
        url: 'https://example.com/new',
        events: ['plant.deleted'],
        description: 'old',
      });
      await expect(tables.subscriptions.updateSubscription('alice', 1n, { description: null })).resolves.toMatchObject({
        url: 'https://example.com/new',
        description: null,
      });
      await expect(tables.subscriptions.updateSubscription('alice', 1n, {})).resolves.toMatchObject({
        description: null,
      });
      await expect(
        tables.subscriptions.updateSubscription('bob', 1n, { description: 'mine' }),
      ).resolves.toBeUndefined();
    });

    it('disables it holding what is pending, and re-enables it with its failure clock stopped', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await pendingDelivery(1n, 11n);
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET failing_since = 5 WHERE id = 1');
      await expect(tables.subscriptions.updateSubscription('alice', 1n, { enabled: false })).resolves.toMatchObject({
        disabledAt: expect.any(Number),
        disabledReason: DISABLED_BY_ITS_USER,
      });
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'held', attempts: 0, claim: null }]);
      // Disabled again: it keeps when and why it was first.
      const [first] = await tables.subscriptions.listSubscriptions('alice');
      await tables.db.dataSource.query("UPDATE webhook_subscriptions SET disabled_reason = 'gone' WHERE id = 1");
      await expect(tables.subscriptions.updateSubscription('alice', 1n, { enabled: false })).resolves.toMatchObject({
        disabledAt: first.disabledAt,
        disabledReason: 'gone',
      });
      await expect(tables.subscriptions.updateSubscription('alice', 1n, { enabled: true })).resolves.toMatchObject({
        disabledAt: null,
        disabledReason: null,
      });
      await expect(
        tables.db.dataSource.query('SELECT failing_since FROM webhook_subscriptions WHERE id = 1'),
      ).resolves.toEqual([{ failing_since: null }]);
      // What was held stays held until it is recovered.
      await expect(deliveryStates(1n)).resolves.toEqual([{ state: 'held', attempts: 0, claim: null }]);
    });
  });

  describe('rotating the secret', () => {
    it('keeps the replaced secret signing for the grace period, and only the last one replaced', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      const rotated = await tables.subscriptions.rotateSecret('alice', 1n, 'sealed-second', 3_600_000);
      expect(rotated?.previousSecretExpiresAt).toBeGreaterThan(Date.now() + 3_500_000);
      await expect(tables.subscriptions.sendingTarget('alice', 1n)).resolves.toEqual({
        key: 1n,
        id: 1n,
        url: 'https://example.com/hooks/1',
        sealedSecrets: ['sealed-second', 'sealed-1'],
      });
      await tables.subscriptions.rotateSecret('alice', 1n, 'sealed-third', 3_600_000);
      await expect(tables.subscriptions.sendingTarget('alice', 1n)).resolves.toMatchObject({
        sealedSecrets: ['sealed-third', 'sealed-second'],
      });
      await pendingDelivery(1n, 11n);
      await expect(claimedBy(1, LEASE, 'c1')).resolves.toMatchObject([
        { sealedSecret: 'sealed-third', previousSealedSecret: 'sealed-second' },
      ]);
      await expect(tables.subscriptions.rotateSecret('bob', 1n, 'sealed-x', 0)).resolves.toBeUndefined();
    });

    it('retires the replaced secret at once with no grace, and once its grace is over', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await expect(tables.subscriptions.rotateSecret('alice', 1n, 'sealed-second', 0)).resolves.toMatchObject({
        previousSecretExpiresAt: null,
      });
      await expect(tables.subscriptions.sendingTarget('alice', 1n)).resolves.toMatchObject({
        sealedSecrets: ['sealed-second'],
      });
      await tables.subscriptions.rotateSecret('alice', 1n, 'sealed-third', 60_000);
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET previous_secret_expires_at = 1 WHERE id = 1');
      await expect(tables.subscriptions.sendingTarget('alice', 1n)).resolves.toMatchObject({
        sealedSecrets: ['sealed-third'],
      });
      await expect(tables.subscriptions.listSubscriptions('alice')).resolves.toMatchObject([
        { previousSecretExpiresAt: null },
      ]);
      await pendingDelivery(1n, 11n);
      await expect(claimedBy(1, LEASE, 'c1')).resolves.toMatchObject([{ previousSealedSecret: null }]);
    });

    it('lists the replaced secrets that still sign and are not under a prefix, and reseals one only if unchanged', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n), 10);
      await tables.subscriptions.insertSubscription(subscription(3n), 10);
      await tables.subscriptions.rotateSecret('alice', 1n, 'v1.new.1', 60_000);
      await tables.subscriptions.rotateSecret('alice', 2n, 'v1.new.2', 60_000);
      await tables.subscriptions.rotateSecret('alice', 3n, 'v1.new.3', 60_000);
      await tables.db.dataSource.query('UPDATE webhook_subscriptions SET previous_secret_expires_at = 1 WHERE id = 3');
      await expect(tables.subscriptions.previousSecretsNotStartingWith('v1.new.', undefined, 10)).resolves.toEqual([
        { id: 1n, secret: 'sealed-1' },
        { id: 2n, secret: 'sealed-2' },
      ]);
      await expect(tables.subscriptions.previousSecretsNotStartingWith('v1.new.', 1n, 10)).resolves.toEqual([
        { id: 2n, secret: 'sealed-2' },
      ]);
      await expect(tables.subscriptions.replacePreviousSecret(1n, 'sealed-1', 'v1.new.old-1')).resolves.toBe(true);
      await expect(tables.subscriptions.replacePreviousSecret(2n, 'changed', 'v1.new.old-2')).resolves.toBe(false);
      await expect(tables.subscriptions.previousSecretsNotStartingWith('v1.new.', undefined, 10)).resolves.toEqual([
        { id: 2n, secret: 'sealed-2' },
      ]);
    });
  });

  describe('testing an endpoint', () => {
    it('lets one test of a subscription hold it at a time, until it ends or its lease does', async () => {
      await tables.subscriptions.insertSubscription(subscription(1n), 10);
      await tables.subscriptions.insertSubscription(subscription(2n), 10);
      const first = await tables.subscriptions.takeTestLease(1n, LEASE);
      expect(first).toBeGreaterThan(Date.now() + LEASE - 5000);
      await expect(tables.subscriptions.takeTestLease(1n, LEASE)).resolves.toBeUndefined();
      // Another subscription is tested apart.
      await expect(tables.subscriptions.takeTestLease(2n, LEASE)).resolves.toEqual(expect.any(Number));
      await tables.subscriptions.endTestLease(1n, first!);
      const second = await tables.subscriptions.takeTestLease(1n, -1000);
      expect(second).toEqual(expect.any(Number));
      // That one's lease is over (its instance died, say): the next test takes the subscription, and
      // the late end of the one before does not free it.
      const third = await tables.subscriptions.takeTestLease(1n, LEASE);
      expect(third).toEqual(expect.any(Number));
      await tables.subscriptions.endTestLease(1n, second!);
      await expect(tables.subscriptions.takeTestLease(1n, LEASE)).resolves.toBeUndefined();
      await tables.subscriptions.endTestLease(1n, third!);
      await expect(tables.subscriptions.takeTestLease(1n, LEASE)).resolves.toEqual(expect.any(Number));
    });
  });
});
