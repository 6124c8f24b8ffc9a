import type { ClaimedDelivery } from '../../src/webhooks/deliveries/claims';
import { DeliveriesRepository } from '../../src/webhooks/deliveries/deliveries.repository';
import { EventsRepository } from '../../src/webhooks/events/events.repository';
import { NewSubscription, SubscriptionsRepository } from '../../src/webhooks/subscriptions/subscriptions.repository';
import { TestDatabase } from './databases';
import { RepositoryDatabase, startRepositoryDatabase } from './repository-database';

const TABLES = ['webhook_subscriptions', 'webhook_deliveries', 'webhook_attempts', 'webhook_events', 'plants'];

export const dataOf = (plantId: bigint) => `{"id":${plantId},"name":"Plant ${plantId}"}`;

/** A subscription of alice's (unless `fields` say otherwise) to created and deleted plants. */
export function subscription(id: bigint, fields: Partial<NewSubscription> = {}): NewSubscription {
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

/** The lease the repository specs claim with. */
export const LEASE = 60_000;
/** An attempt's outcome that retries after `delayMs`. */
export const retry = (delayMs = 60_000) => ({ kind: 'retry' as const, delayMs });

export interface WebhookTables {
  db: RepositoryDatabase;
  subscriptions: SubscriptionsRepository;
  deliveries: DeliveriesRepository;
  events: EventsRepository;
  /** A pending delivery of `subscriptionId`, due `dueInMs` from now (negative: overdue). */
  pendingDelivery(subscriptionId: bigint, plantId: bigint, dueInMs?: number): Promise<void>;
  /** What a claim took, without caps. */
  claimedBy(limit: number, lease: number, claim: string): Promise<ClaimedDelivery[]>;
  /** The state, attempts and claim of each of the subscription's deliveries, in id order. */
  deliveryStates(subscriptionId: bigint): Promise<{ state: string; attempts: number; claim: string | null }[]>;
}

/**
 * The three webhook repositories on the spec's own database, emptied before each test: what the
 * repository specs of src/webhooks share. Its fields are set once the spec's beforeAll has run.
 */
export function webhookTables(name: TestDatabase['name']): WebhookTables {
  const tables = {
    async pendingDelivery(subscriptionId: bigint, plantId: bigint, dueInMs = -1000) {
      const now = Date.now();
      await tables.db.dataSource.query(
        'INSERT INTO webhook_deliveries (subscription_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
          "VALUES (?, 'plant.created', ?, ?, 'pending', 0, ?)",
        [subscriptionId, dataOf(plantId), now, now + dueInMs],
      );
    },
    async claimedBy(limit: number, lease: number, claim: string) {
      return (await tables.deliveries.claimDue(limit, lease, claim)).deliveries;
    },
    async deliveryStates(subscriptionId: bigint) {
      const rows = (await tables.db.dataSource.query(
        'SELECT state, attempts, claim FROM webhook_deliveries WHERE subscription_id = ? ORDER BY id',
        [subscriptionId],
      )) as { state: string; attempts: unknown; claim: string | null }[];
      return rows.map((row) => ({ state: row.state, attempts: Number(row.attempts), claim: row.claim }));
    },
  } as WebhookTables;
  beforeAll(async () => {
    tables.db = await startRepositoryDatabase(name, [SubscriptionsRepository, DeliveriesRepository, EventsRepository]);
    tables.subscriptions = tables.db.get(SubscriptionsRepository);
    tables.deliveries = tables.db.get(DeliveriesRepository);
    tables.events = tables.db.get(EventsRepository);
  });
  afterAll(() => tables.db.close());
  beforeEach(() => tables.db.clear(...TABLES));
  return tables;
}
