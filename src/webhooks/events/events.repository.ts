import { Injectable } from '@nestjs/common';
import { Condition, Database, EntityTable, NOW_MS, READ } from '../../database';
import { WebhookDelivery } from '../deliveries/webhook-delivery.entity';
import { WebhookSubscription } from '../subscriptions/webhook-subscription.entity';
import { WebhookEvent } from './events';
import { WebhookEventRecord } from './webhook-event.entity';

/** A user's event as GET /events shows it. */
export interface EventRow {
  id: bigint;
  type: WebhookEvent;
  data: string;
  occurredAt: number;
}

export interface EventQuery {
  limit: number;
  /** Ids after this one in the order asked for. */
  after?: bigint;
  order: 'asc' | 'desc';
  types?: readonly WebhookEvent[];
  /** Occurred at or after. */
  since?: number;
  /** Occurred before. */
  until?: number;
}

/**
 * Which subscriptions (aliased `s`) want `type`: `events` is a JSON array of event types, matched
 * as its quoted member. Enabled or not: a disabled subscription's deliveries are recorded too, held
 * until recovered.
 */
function wants(subscriptions: EntityTable<WebhookSubscription>, type: WebhookEvent): string {
  return `s.${subscriptions.column('events')} LIKE '%"${type}"%'`;
}

/** The subscriptions of an owner (the one parameter) that want any of `types`, as SQL of the subscription entity's names. */
function wanting(subscriptions: EntityTable<WebhookSubscription>, types: readonly WebhookEvent[]): string {
  const owner = subscriptions.column('owner');
  return `SELECT 1 FROM ${subscriptions.name} s WHERE s.${owner} = ? AND (${types.map((type) => wants(subscriptions, type)).join(' OR ')})`;
}

/**
 * The events table (what GET /events lists) and the recording of an event with its deliveries, in
 * the plant change's transaction (EventOutbox). Statements are made from the entities once, at
 * start-up, or once per shape of a call (the event types asked about, the filters of a page).
 */
@Injectable()
export class EventsRepository {
  private readonly events: EntityTable<WebhookEventRecord>;
  private readonly subscriptions: EntityTable<WebhookSubscription>;
  private readonly deliveries: EntityTable<WebhookDelivery>;
  private readonly now: string;
  private readonly prunable: string;
  /** noSubscriptionWants' SQL by the array of event types asked about (eventTypesOn gives the same array each time). */
  private readonly unwanted = new WeakMap<readonly WebhookEvent[], string>();
  private readonly read: (row: Record<string, unknown>) => EventRow;

  constructor(private readonly database: Database) {
    this.events = database.table(WebhookEventRecord);
    this.subscriptions = database.table(WebhookSubscription);
    this.deliveries = database.table(WebhookDelivery);
    this.now = database.sql(NOW_MS);
    this.prunable = this.events.compile(this.events.delete().where(`occurredAt < ${this.now} - :retention`), [
      'retention',
    ]);
    const read = this.events.reader(['id', 'eventType', 'data', 'occurredAt']);
    this.read = (row) => {
      const event = read(row);
      return {
        id: BigInt(event.id!),
        type: event.eventType as WebhookEvent,
        data: event.data!,
        occurredAt: Number(event.occurredAt),
      };
    };
  }

  /**
   * A condition for a plant statement: no subscription of `owner` wants any of `types`, so the
   * change needs no event recorded. Checked by the database in the statement itself. Its SQL is the
   * same string for the same `types`, so the plants repository composes its statement once.
   */
  noSubscriptionWants(owner: string, types: readonly WebhookEvent[]): Condition {
    let sql = this.unwanted.get(types);
    if (sql === undefined) {
      sql = `NOT EXISTS (${wanting(this.subscriptions, types)})`;
      this.unwanted.set(types, sql);
    }
    return { sql, parameters: [owner] };
  }

  /** Whether a subscription of `owner` wants any of `types`. */
  async subscriptionWants(owner: string, types: readonly WebhookEvent[]): Promise<boolean> {
    const sql = this.events.shapedStatement(
      `wants ${types.join()}`,
      () => `${wanting(this.subscriptions, types)} LIMIT 1`,
    );
    return (await this.database.query(sql, [owner], READ)).length > 0;
  }

  /**
   * Each event once (webhook_events), when a subscription of `owner` wants it, and a delivery of it
   * for every such subscription: due now, or held for one that is disabled (sent only if
   * recovered). How many deliveries. Run in the change's transaction (EventOutbox); the
   * subscriptions are read, not locked.
   */
  async recordEvents(owner: string, events: readonly { type: WebhookEvent; data: string }[]): Promise<number> {
    let recorded = 0;
    for (const { type, data } of events) {
      const [recordEvent, recordDeliveries] = this.recordingOf(type);
      const event = await this.database.insert(recordEvent, [owner, type, data, owner]);
      if (event.id === undefined) continue;
      recorded += await this.database.execute(recordDeliveries, [event.id]);
    }
    return recorded;
  }

  /**
   * Up to `query.limit` events of `owner` (one more, to tell whether another page follows), in id
   * order: the order they were recorded in.
   */
  async listEvents(owner: string, query: EventQuery): Promise<EventRow[]> {
    const shape = [
      query.order,
      query.after !== undefined,
      query.types?.length ?? -1,
      query.since !== undefined,
      query.until !== undefined,
    ];
    const sql = this.events.shapedStatement(`list ${shape.join()}`, () => {
      const page = this.events.select('e', ['id', 'eventType', 'data', 'occurredAt']).where('e.owner = :owner');
      const names = ['owner'];
      if (query.after !== undefined) {
        page.andWhere(query.order === 'asc' ? 'e.id > :after' : 'e.id < :after');
        names.push('after');
      }
      if (query.types !== undefined) {
        const types = query.types.map((_, i) => `type${i}`);
        page.andWhere(`e.eventType IN (${types.map((name) => `:${name}`).join(', ')})`);
        names.push(...types);
      }
      if (query.since !== undefined) {
        page.andWhere('e.occurredAt >= :since');
        names.push('since');
      }
      if (query.until !== undefined) {
        page.andWhere('e.occurredAt < :until');
        names.push('until');
      }
      return `${this.events.compile(page.orderBy('e.id', query.order === 'asc' ? 'ASC' : 'DESC'), names)} LIMIT ?`;
    });
    const parameters = [owner, query.after, ...(query.types ?? []), query.since, query.until];
    const rows = await this.database.query(
      sql,
      [...parameters.filter((value) => value !== undefined), query.limit + 1],
      READ,
    );
    return rows.map(this.read);
  }

  /** Forgets events that occurred longer ago than `retentionMs`. */
  async prune(retentionMs: number): Promise<void> {
    await this.database.execute(this.prunable, [retentionMs]);
  }

  /**
   * The two statements that record an event of `type`: the event, only while a subscription wants
   * it, and its deliveries. The query builder makes no INSERT ... SELECT: they are written from the
   * entities' names.
   */
  private recordingOf(type: WebhookEvent): [string, string] {
    const [e, s, d] = [this.events, this.subscriptions, this.deliveries];
    const recordEvent = e.shapedStatement(`event ${type}`, () => {
      const columns = e.columnList(['owner', 'eventType', 'data', 'occurredAt']);
      return (
        `INSERT INTO ${e.name} (${columns}) SELECT ?, ?, ?, ${this.now} ` +
        `FROM (SELECT 1 AS one) one WHERE EXISTS (${wanting(s, [type])})`
      );
    });
    const recordDeliveries = e.shapedStatement(`deliveries ${type}`, () => {
      const columns = d.columnList([
        'subscriptionId',
        'eventId',
        'eventType',
        'data',
        'occurredAt',
        'state',
        'attempts',
        'nextAttemptAt',
      ]);
      const [id, eventType, data, occurredAt] = (['id', 'eventType', 'data', 'occurredAt'] as const).map(
        (property) => `e.${e.column(property)}`,
      );
      return (
        `INSERT INTO ${d.name} (${columns}) SELECT s.${s.column('id')}, ${id}, ${eventType}, ${data}, ${occurredAt}, ` +
        `CASE WHEN s.${s.column('disabledAt')} IS NULL THEN 'pending' ELSE 'held' END, 0, ${this.now} ` +
        `FROM ${e.name} e JOIN ${s.name} s ON s.${s.column('owner')} = e.${e.column('owner')} ` +
        `WHERE ${id} = ? AND ${wants(s, type)}`
      );
    });
    return [recordEvent, recordDeliveries];
  }
}
