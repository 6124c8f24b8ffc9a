import { Injectable } from '@nestjs/common';
import { int64Transformer } from '../common/int64';
import { Condition, Database, IsolationLevel, NOW_MS, PerDialect, READ, Row, WRITE } from '../database';
import { WebhookEvent, isWebhookEvent } from './events/events';
import { MAX_SUBSCRIPTIONS_PER_CLAIM, RECOVER_BATCH, RECOVER_ID_WINDOW } from './webhooks.limits';

/**
 * The subscriptions with a delivery due, each with the time its oldest became due and its owner,
 * those waiting longest first. `state` is compared as a range rather than for equality so that
 * MySQL/MariaDB read one entry of IDX_webhook_deliveries_claimable per subscription (a loose index
 * scan, "Using index for group-by") instead of every pending row: a subscription with a deep
 * backlog costs a claim what one with a single due delivery costs. A subscription is due when the
 * earliest of its pending deliveries is.
 */
const dueSubscriptions = (now: string) =>
  'SELECT d.subscription_id, MIN(d.next_attempt_at) AS due, ' +
  '(SELECT s.owner FROM webhook_subscriptions s WHERE s.id = d.subscription_id) AS owner ' +
  "FROM webhook_deliveries d WHERE d.state BETWEEN 'pending' AND 'pending' GROUP BY d.state, d.subscription_id " +
  `HAVING MIN(d.next_attempt_at) <= ${now} ORDER BY due LIMIT ?`;
export const DUE_SUBSCRIPTIONS: PerDialect<string> = {
  mysql: dueSubscriptions(NOW_MS.mysql),
  sqlite: dueSubscriptions(NOW_MS.sqlite),
};

const dueOfSubscription = (now: string) =>
  "SELECT id FROM webhook_deliveries WHERE state = 'pending' AND subscription_id = ? " +
  `AND next_attempt_at <= ${now} ORDER BY next_attempt_at LIMIT ?`;
/**
 * Up to `limit` due deliveries of one subscription, those due longest first. On MySQL/MariaDB,
 * rows another instance is claiming at the same moment are skipped rather than waited for; SQLite
 * has one writer at a time.
 */
const CLAIM_DUE: PerDialect<string> = {
  mysql: `${dueOfSubscription(NOW_MS.mysql)} FOR UPDATE SKIP LOCKED`,
  sqlite: dueOfSubscription(NOW_MS.sqlite),
};
const CLAIM_ISOLATION: PerDialect<IsolationLevel> = { mysql: 'READ COMMITTED', sqlite: 'SERIALIZABLE' };

/**
 * The subscriptions of the owner (the first parameter) that are enabled and want `type`: `events`
 * is a JSON array of event types, matched as its quoted member.
 */
function wants(type: WebhookEvent): string {
  return `s.events LIKE '%"${type}"%'`;
}
/** Enabled or not: a disabled subscription's deliveries are recorded too, held until recovered. */
const WANTING = 's.owner = ? AND ';
/** noSubscriptionWants' SQL by the array of event types asked about (eventTypesOn gives the same array each time). */
const unwanted = new WeakMap<readonly WebhookEvent[], string>();

/**
 * A condition for a plant statement: no subscription of `owner` wants any of `types`, so the
 * change needs no event recorded. Checked by the database in the statement itself. Its SQL is the
 * same string for the same `types`, so the plants repository composes its statement once.
 */
export function noSubscriptionWants(owner: string, types: readonly WebhookEvent[]): Condition {
  let sql = unwanted.get(types);
  if (sql === undefined) {
    sql = `NOT EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE ${WANTING}(${types.map(wants).join(' OR ')}))`;
    unwanted.set(types, sql);
  }
  return { sql, parameters: [owner] };
}

/**
 * A subscription as a path names it: by the id the API shows (`public_id`), or by the row's key
 * (`id`), which a subscription made before public ids was shown by and which a client may still
 * hold. Either way one subscription: a key within MAX_SUBSCRIPTION_ID is also its row's public id,
 * and a key above it is no public id (save one chance in 2^53 that an id drawn for one subscription
 * equals the key of another that the previous release made during an upgrade).
 */
const BY_PATH_ID = 'owner = ? AND (public_id = ? OR id = ?)';

/** A delivery of a subscription, named in a path by its event's id or (recorded before events were) its own. */
export type DeliveryRef = { eventId: bigint } | { deliveryId: bigint };

const deliveryRef = (ref: DeliveryRef): Condition =>
  'eventId' in ref
    ? { sql: 'event_id = ?', parameters: [ref.eventId] }
    : { sql: 'id = ? AND event_id IS NULL', parameters: [ref.deliveryId] };

/** What a delivery may be recovered from: it failed, or was held while its subscription was disabled. */
const RECOVERABLE = "state IN ('failed', 'held')";

export interface SubscriptionRow {
  /** The id the API shows. */
  id: bigint;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  createdAt: number;
  disabledAt: number | null;
  disabledReason: string | null;
  /** Until when the secret a rotation replaced still signs, while it does. */
  previousSecretExpiresAt: number | null;
}

/** A change of a subscription (PATCH): what is given changes, `description: null` clears it. */
export interface SubscriptionChange {
  url?: string;
  events?: readonly WebhookEvent[];
  description?: string | null;
  enabled?: boolean;
}

/** The reason a subscription disabled through the API shows. */
export const DISABLED_BY_ITS_USER = 'disabled through the API';

/** A subscription as sending to it needs it: the live secrets, sealed, the current one first. */
export interface SendingTarget {
  key: bigint;
  id: bigint;
  url: string;
  sealedSecrets: string[];
}

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

/** How many more attempts one subscription, and one owner, may have in flight on the claiming instance. */
export interface ClaimRoom {
  subscription(id: bigint): number;
  owner(owner: string): number;
}

const NO_CAPS: ClaimRoom = { subscription: () => Infinity, owner: () => Infinity };

/** What a claim took, and whether more is due for which it had room (so the next claim should follow at once). */
export interface Claimed {
  deliveries: ClaimedDelivery[];
  more: boolean;
}

export interface NewSubscription {
  /** Both the row's key and the id the API shows. */
  id: bigint;
  owner: string;
  url: string;
  events: readonly WebhookEvent[];
  description: string | null;
  sealedSecret: string;
  createdAt: number;
}

export interface AttemptRow {
  deliveryId: bigint;
  /** The event the delivery carried, if it was recorded with one. */
  eventId: bigint | null;
  type: WebhookEvent;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  attemptedAt: number;
  durationMs: number;
}

/** A delivery claimed by one instance, with what it needs to send it. */
export interface ClaimedDelivery {
  id: bigint;
  /** Its event (webhook_events); null when recorded before events were: its `webhook-id` is then its own. */
  eventId: bigint | null;
  subscriptionId: bigint;
  owner: string;
  type: WebhookEvent;
  /** The body's `data`, as recorded with the change (exact JSON). */
  data: string;
  occurredAt: number;
  /** Attempts made before this one. */
  attempts: number;
  /** Attempts made before it was last resent or recovered: the retry schedule counts from there. */
  retryFrom: number;
  url: string;
  sealedSecret: string;
  /** The secret a rotation replaced, while it still signs. */
  previousSealedSecret: string | null;
  disabled: boolean;
}

export type AttemptOutcome =
  /** 2xx. */
  | { kind: 'delivered' }
  /** Another attempt after `delayMs`. */
  | { kind: 'retry'; delayMs: number }
  /** No attempts left. */
  | { kind: 'failed' }
  /** 410 Gone: disable the subscription and hold what is pending. */
  | { kind: 'disable'; reason: string }
  /** Not sent: the subscription was disabled meanwhile. Held, to be recovered. */
  | { kind: 'hold' };

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /**
   * When the attempt began, by this process's `performance.now()`: it is stored as that long before
   * the statement that records it, on the database's clock.
   */
  startedAt: number;
}

/** An attempt made (or a delivery dropped without one), to record with its consequence. */
export interface FinishedAttempt {
  delivery: ClaimedDelivery;
  attempt: AttemptRecord;
  outcome: AttemptOutcome;
}

/** Whether something was sent: a delivery dropped because its subscription is disabled was not. */
const wasAttempted = ({ attempt }: FinishedAttempt): boolean => attempt.statusCode !== null || attempt.error !== null;

const DELIVERY_STATE: Record<AttemptOutcome['kind'], string> = {
  delivered: 'delivered',
  retry: 'pending',
  failed: 'failed',
  disable: 'failed',
  hold: 'held',
};

const toBigint = (value: unknown): bigint => int64Transformer.from(value as string | bigint) as bigint;
const toNumber = (value: unknown): number => Number(value);
const toNullableNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/**
 * The three webhook tables: subscriptions, one delivery per event and subscription (recorded with
 * the plant change, see EventOutbox) and the attempts made. Times are epoch
 * milliseconds; those that decide when something is due are taken from the database's clock.
 */
@Injectable()
export class WebhooksRepository {
  /** The database's clock, which every instance schedules and claims against. */
  private readonly now: string;

  constructor(private readonly database: Database) {
    this.now = database.sql(NOW_MS);
  }

  /**
   * Inserts the subscription unless the owner already has `limit`, in one statement: two requests
   * at once on one server cannot both pass the count (one waits for the other's locks, or loses a
   * deadlock and is run again). False when the owner is at the limit.
   */
  async insertSubscription(subscription: NewSubscription, limit: number): Promise<boolean> {
    const sql =
      'INSERT INTO webhook_subscriptions (id, public_id, owner, url, events, description, secret, created_at) ' +
      'SELECT ?, ?, ?, ?, ?, ?, ?, ? FROM (SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE owner = ?) existing ' +
      'WHERE existing.n < ?';
    const parameters = [
      subscription.id,
      subscription.id,
      subscription.owner,
      subscription.url,
      JSON.stringify(subscription.events),
      subscription.description,
      subscription.sealedSecret,
      subscription.createdAt,
      subscription.owner,
      limit,
    ];
    return (await this.database.execute(sql, parameters, WRITE)) > 0;
  }

  async listSubscriptions(owner: string): Promise<SubscriptionRow[]> {
    const rows = await this.read(
      `${subscriptionColumns(this.now)} FROM webhook_subscriptions WHERE owner = ? ORDER BY public_id`,
      [owner],
    );
    return rows.map(toSubscriptionRow);
  }

  /** The owner's subscription a path's id names (see BY_PATH_ID), as listSubscriptions shows it. */
  async getSubscription(owner: string, id: bigint): Promise<SubscriptionRow | undefined> {
    const rows = await this.read(`${subscriptionColumns(this.now)} FROM webhook_subscriptions WHERE ${BY_PATH_ID}`, [
      owner,
      id,
      id,
    ]);
    return rows.length > 0 ? toSubscriptionRow(rows[0]) : undefined;
  }

  /**
   * Changes what `change` gives of the owner's subscription, in one transaction: re-enabling it
   * stops its failure clock; disabling it holds what is pending (sent only if recovered). Undefined
   * when the owner has no such subscription.
   */
  async updateSubscription(
    owner: string,
    id: bigint,
    change: SubscriptionChange,
  ): Promise<SubscriptionRow | undefined> {
    return this.database.transaction(
      async () => {
        const [found] = await this.database.query(
          `SELECT id, disabled_at FROM webhook_subscriptions WHERE ${BY_PATH_ID}`,
          [owner, id, id],
        );
        if (found === undefined) return undefined;
        const key = toBigint(found.id);
        const set: string[] = [];
        const parameters: unknown[] = [];
        const assign = (column: string, value: unknown) => {
          set.push(`${column} = ?`);
          parameters.push(value);
        };
        if (change.url !== undefined) assign('url', change.url);
        if (change.events !== undefined) assign('events', JSON.stringify(change.events));
        if (change.description !== undefined) assign('description', change.description);
        if (change.enabled === true) set.push('disabled_at = NULL, disabled_reason = NULL, failing_since = NULL');
        if (change.enabled === false) {
          // The reason first: MySQL assigns left to right, reading what it has already set.
          set.push(
            `disabled_reason = CASE WHEN disabled_at IS NULL THEN ? ELSE disabled_reason END, disabled_at = COALESCE(disabled_at, ${this.now})`,
          );
          parameters.push(DISABLED_BY_ITS_USER);
        }
        if (set.length > 0) {
          await this.database.execute(`UPDATE webhook_subscriptions SET ${set.join(', ')} WHERE id = ?`, [
            ...parameters,
            key,
          ]);
        }
        if (change.enabled === false && found.disabled_at === null) await this.holdPending(key);
        return this.getSubscription(owner, id);
      },
      { retry: WRITE },
    );
  }

  /**
   * A new signing secret for the owner's subscription; the one it replaces keeps signing for
   * `graceMs` (from now on the database's clock), and none before it does. Undefined when the owner
   * has no such subscription.
   */
  async rotateSecret(
    owner: string,
    id: bigint,
    sealedSecret: string,
    graceMs: number,
  ): Promise<SubscriptionRow | undefined> {
    return this.database.transaction(
      async () => {
        // MySQL assigns left to right: the previous secret is read before `secret` is replaced.
        const keep =
          graceMs > 0
            ? `previous_secret = secret, previous_secret_expires_at = ${this.now} + ?`
            : 'previous_secret = NULL, previous_secret_expires_at = NULL';
        const changed = await this.database.execute(
          `UPDATE webhook_subscriptions SET ${keep}, secret = ? WHERE ${BY_PATH_ID}`,
          [...(graceMs > 0 ? [graceMs] : []), sealedSecret, owner, id, id],
        );
        return changed > 0 ? this.getSubscription(owner, id) : undefined;
      },
      { retry: WRITE },
    );
  }

  /** The owner's subscription a path's id names, with what sending to it needs. */
  async sendingTarget(owner: string, id: bigint): Promise<SendingTarget | undefined> {
    const rows = await this.read(
      'SELECT id, public_id, url, secret, ' +
        `CASE WHEN previous_secret_expires_at > ${this.now} THEN previous_secret END AS previous_secret ` +
        `FROM webhook_subscriptions WHERE ${BY_PATH_ID}`,
      [owner, id, id],
    );
    if (rows.length === 0) return undefined;
    const [row] = rows;
    return {
      key: toBigint(row.id),
      id: toBigint(row.public_id),
      url: String(row.url),
      sealedSecrets: [String(row.secret), ...(row.previous_secret == null ? [] : [String(row.previous_secret)])],
    };
  }

  /**
   * Takes the lease of a test of the subscription (by its key) for `leaseMs` on the database's
   * clock, unless a test whose lease has not ended holds it: one test of a subscription at a time,
   * whichever instances they are asked of. The lease's end, which endTestLease names, or undefined
   * when another test runs.
   */
  async takeTestLease(key: bigint, leaseMs: number): Promise<number | undefined> {
    return this.database.transaction(
      async () => {
        const taken = await this.database.execute(
          `UPDATE webhook_subscriptions SET testing_until = ${this.now} + ? ` +
            `WHERE id = ? AND (testing_until IS NULL OR testing_until <= ${this.now})`,
          [leaseMs, key],
        );
        if (taken === 0) return undefined;
        const [row] = await this.database.query('SELECT testing_until FROM webhook_subscriptions WHERE id = ?', [key]);
        return toNumber(row.testing_until);
      },
      { retry: WRITE },
    );
  }

  /** Ends a test's lease (`until`, as takeTestLease gave it), unless another test took the subscription since it ran out. */
  async endTestLease(key: bigint, until: number): Promise<void> {
    await this.database.execute(
      'UPDATE webhook_subscriptions SET testing_until = NULL WHERE id = ? AND testing_until = ?',
      [key, until],
      WRITE,
    );
  }

  /** The key of the owner's subscription that a path's id names (see BY_PATH_ID), if there is one. */
  async findSubscription(owner: string, id: bigint): Promise<bigint | undefined> {
    return (await this.findSubscriptionState(owner, id))?.key;
  }

  /** The key of the owner's subscription that a path's id names, and whether it is disabled. */
  async findSubscriptionState(owner: string, id: bigint): Promise<{ key: bigint; disabled: boolean } | undefined> {
    const rows = await this.read(`SELECT id, disabled_at FROM webhook_subscriptions WHERE ${BY_PATH_ID}`, [
      owner,
      id,
      id,
    ]);
    return rows.length > 0 ? { key: toBigint(rows[0].id), disabled: rows[0].disabled_at != null } : undefined;
  }

  /** Whether an enabled subscription of `owner` wants any of `types`. */
  async subscriptionWants(owner: string, types: readonly WebhookEvent[]): Promise<boolean> {
    const rows = await this.database.query(
      `SELECT 1 AS wanted FROM webhook_subscriptions s WHERE ${WANTING}(${types.map(wants).join(' OR ')}) LIMIT 1`,
      [owner],
      READ,
    );
    return rows.length > 0;
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
      const event = await this.database.insert(
        `INSERT INTO webhook_events (owner, event_type, data, occurred_at) SELECT ?, ?, ?, ${this.now} ` +
          `FROM (SELECT 1 AS one) one WHERE EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE ${WANTING}${wants(type)})`,
        [owner, type, data, owner],
      );
      if (event.id === undefined) continue;
      recorded += await this.database.execute(
        'INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
          "SELECT s.id, e.id, e.event_type, e.data, e.occurred_at, CASE WHEN s.disabled_at IS NULL THEN 'pending' ELSE 'held' END, " +
          `0, ${this.now} FROM webhook_events e JOIN webhook_subscriptions s ON s.owner = e.owner ` +
          `WHERE e.id = ? AND ${wants(type)}`,
        [event.id],
      );
    }
    return recorded;
  }

  /**
   * Up to `query.limit` events of `owner` (one more, to tell whether another page follows), in id
   * order: the order they were recorded in.
   */
  async listEvents(owner: string, query: EventQuery): Promise<EventRow[]> {
    const where = ['owner = ?'];
    const parameters: unknown[] = [owner];
    if (query.after !== undefined) {
      where.push(query.order === 'asc' ? 'id > ?' : 'id < ?');
      parameters.push(query.after);
    }
    if (query.types !== undefined) {
      where.push(`event_type IN (${query.types.map(() => '?').join(', ')})`);
      parameters.push(...query.types);
    }
    if (query.since !== undefined) {
      where.push('occurred_at >= ?');
      parameters.push(query.since);
    }
    if (query.until !== undefined) {
      where.push('occurred_at < ?');
      parameters.push(query.until);
    }
    const rows = await this.read(
      `SELECT id, event_type, data, occurred_at FROM webhook_events WHERE ${where.join(' AND ')} ` +
        `ORDER BY id ${query.order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`,
      [...parameters, query.limit + 1],
    );
    return rows.map((row) => ({
      id: toBigint(row.id),
      type: row.event_type as WebhookEvent,
      data: String(row.data),
      occurredAt: toNumber(row.occurred_at),
    }));
  }

  /**
   * The subscription a path's id names (see BY_PATH_ID) and everything recorded for it go
   * together, or not at all.
   */
  async deleteSubscription(owner: string, id: bigint): Promise<boolean> {
    return this.database.transaction(
      async () => {
        const key = await this.findSubscription(owner, id);
        if (key === undefined) return false;
        const deleted = await this.database.execute('DELETE FROM webhook_subscriptions WHERE owner = ? AND id = ?', [
          owner,
          key,
        ]);
        if (deleted === 0) return false;
        await this.database.execute('DELETE FROM webhook_deliveries WHERE subscription_id = ?', [key]);
        await this.database.execute('DELETE FROM webhook_attempts WHERE subscription_id = ?', [key]);
        return true;
      },
      { retry: WRITE },
    );
  }

  async recentAttempts(subscriptionId: bigint, limit: number): Promise<AttemptRow[]> {
    const rows = await this.read(
      'SELECT a.delivery_id, d.event_id, a.event_type, a.attempt, a.status_code, a.error, a.attempted_at, a.duration_ms ' +
        'FROM webhook_attempts a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id ' +
        'WHERE a.subscription_id = ? ORDER BY a.id DESC LIMIT ?',
      [subscriptionId, limit],
    );
    return rows.map((row) => ({
      deliveryId: toBigint(row.delivery_id),
      eventId: row.event_id == null ? null : toBigint(row.event_id),
      type: row.event_type as WebhookEvent,
      attempt: toNumber(row.attempt),
      statusCode: toNullableNumber(row.status_code),
      error: (row.error as string | null) ?? null,
      attemptedAt: toNumber(row.attempted_at),
      durationMs: toNumber(row.duration_ms),
    }));
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`, shared among the subscriptions with
   * something due, those waiting longest first: each is given a slot in turn while it has room
   * (`room`: what it, and its owner, may still have in flight), so one subscription's backlog never
   * takes the slots others are due. They are not due again until the lease ends, so an instance
   * that dies holding them gives them back by itself (see CLAIM_DUE); on Galera two nodes may still
   * pick the same row, and one of the two commits fails certification and claims nothing this time.
   */
  async claimDue(limit: number, leaseMs: number, claim: string, room: ClaimRoom = NO_CAPS): Promise<Claimed> {
    const due = await this.database.query(DUE_SUBSCRIPTIONS, [MAX_SUBSCRIPTIONS_PER_CLAIM + 1], READ);
    const truncated = due.length > MAX_SUBSCRIPTIONS_PER_CLAIM;
    const shares = shareSlots(
      due
        .slice(0, MAX_SUBSCRIPTIONS_PER_CLAIM)
        .filter((row) => row.owner != null)
        .map((row) => ({ id: toBigint(row.subscription_id), owner: String(row.owner) })),
      limit,
      room,
    );
    if (shares.length === 0) return { deliveries: [], more: truncated };
    const taken = await this.database.transaction(
      async () => {
        const taken: { share: (typeof shares)[number]; ids: bigint[] }[] = [];
        for (const share of shares) {
          const rows = await this.database.query(CLAIM_DUE, [share.id, share.slots]);
          taken.push({ share, ids: rows.map((row) => toBigint(row.id)) });
        }
        const ids = taken.flatMap(({ ids }) => ids);
        if (ids.length > 0) {
          // A resend that waited for an attempt whose lease ended without an outcome (its instance
          // died): this attempt is the one after it, the first of its schedule.
          await this.database.execute(
            `UPDATE webhook_deliveries SET claim = ?, next_attempt_at = ${this.now} + ?, ` +
              'retry_from = CASE WHEN resend_after_attempt = 1 THEN attempts ELSE retry_from END, resend_after_attempt = 0 ' +
              `WHERE id IN (${ids.map(() => '?').join(', ')})`,
            [claim, leaseMs, ...ids],
          );
        }
        return taken;
      },
      { isolation: CLAIM_ISOLATION },
    );
    // A subscription that filled its share while it, and its owner, had room for more may have more due.
    const more = truncated || taken.some(({ share, ids }) => ids.length === share.slots && share.roomLeft);
    const ids = taken.flatMap(({ ids }) => ids);
    if (ids.length === 0) return { deliveries: [], more };
    const rows = await this.read(
      'SELECT d.id, d.event_id, d.subscription_id, d.event_type, d.data, d.occurred_at, d.attempts, d.retry_from, ' +
        's.owner, s.url, s.secret, s.disabled_at, ' +
        `CASE WHEN s.previous_secret_expires_at > ${this.now} THEN s.previous_secret END AS previous_secret ` +
        'FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id ' +
        `WHERE d.claim = ? AND d.id IN (${ids.map(() => '?').join(', ')}) ORDER BY d.id`,
      [claim, ...ids],
    );
    const deliveries = rows.map((row) => ({
      id: toBigint(row.id),
      eventId: row.event_id == null ? null : toBigint(row.event_id),
      subscriptionId: toBigint(row.subscription_id),
      owner: String(row.owner),
      type: row.event_type as WebhookEvent,
      data: String(row.data),
      occurredAt: toNumber(row.occurred_at),
      attempts: toNumber(row.attempts),
      retryFrom: row.retry_from == null ? 0 : toNumber(row.retry_from),
      url: String(row.url),
      sealedSecret: String(row.secret),
      previousSealedSecret: row.previous_secret == null ? null : String(row.previous_secret),
      disabled: row.disabled_at != null,
    }));
    return { deliveries, more };
  }

  /** Records one attempt and its consequence (recordAttempts, for one). */
  async recordAttempt(
    delivery: ClaimedDelivery,
    claim: string,
    attempt: AttemptRecord,
    outcome: AttemptOutcome,
    disableAfterMs: number,
  ): Promise<{ disabled: boolean }> {
    const disabled = await this.recordAttempts(claim, [{ delivery, attempt, outcome }], disableAfterMs);
    return { disabled: disabled.has(delivery.subscriptionId) };
  }

  /**
   * Records finished attempts, in the order they finished, with their consequences, in one
   * transaction: each subscription's failure clock once (it disables the subscription once it has
   * failed for `disableAfterMs` without a success), then the attempts, then the deliveries' new
   * states (only those this instance still holds the claim of). A busy subscription's outcomes are
   * recorded a batch at a time rather than one transaction each, which would queue on its row.
   * Subscriptions' rows are locked first, for writing and in id order, so instances recording
   * outcomes of the same subscriptions at once queue instead of deadlocking; a transaction that
   * still loses a deadlock (or, on Galera, a certification) is rolled back whole and run again.
   * Resolves to the subscriptions this disabled.
   */
  async recordAttempts(
    claim: string,
    finished: readonly FinishedAttempt[],
    disableAfterMs: number,
  ): Promise<Set<bigint>> {
    if (finished.length === 0) return new Set();
    const attempted = finished.filter(wasAttempted);
    const bySubscription = new Map<bigint, AttemptOutcome[]>();
    for (const { delivery, outcome } of attempted) {
      const outcomes = bySubscription.get(delivery.subscriptionId) ?? [];
      outcomes.push(outcome);
      bySubscription.set(delivery.subscriptionId, outcomes);
    }
    const subscriptions = [...bySubscription.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return this.database.transaction(
      async () => {
        const disabled = new Set<bigint>();
        for (const id of subscriptions) {
          if (await this.updateFailureClockAfter(id, bySubscription.get(id)!, disableAfterMs)) disabled.add(id);
        }
        if (attempted.length > 0) await this.insertAttempts(attempted);
        await this.updateDeliveries(claim, finished);
        for (const id of disabled) await this.holdPending(id);
        return disabled;
      },
      { retry: WRITE },
    );
  }

  /**
   * The clock after a subscription's outcomes, in the order they came: a 410 disables it; a success
   * stops the clock, and failures after the last success start it again.
   */
  private async updateFailureClockAfter(
    id: bigint,
    outcomes: readonly AttemptOutcome[],
    disableAfterMs: number,
  ): Promise<boolean> {
    const gone = outcomes.find((outcome) => outcome.kind === 'disable');
    if (gone) return this.updateFailureClock(id, gone, disableAfterMs);
    const last = outcomes[outcomes.length - 1];
    if (last.kind === 'delivered' || outcomes.some((outcome) => outcome.kind === 'delivered')) {
      await this.updateFailureClock(id, { kind: 'delivered' }, disableAfterMs);
    }
    return last.kind === 'delivered' ? false : this.updateFailureClock(id, last, disableAfterMs);
  }

  /**
   * One row per attempt, in one statement; not for a subscription deleted while the attempt ran:
   * its history went with it. `attempted_at` is when the attempt began, on the database's clock: now,
   * less the time since it began as this process measured it.
   */
  private async insertAttempts(attempted: readonly FinishedAttempt[]): Promise<void> {
    const row =
      '? AS subscription_id, ? AS delivery_id, ? AS event_type, ? AS attempt, ? AS status_code, ? AS error, ' +
      '? AS began_ms_ago, ? AS duration_ms';
    const rows = attempted.map((_, i) => `SELECT ${i === 0 ? row : '?, ?, ?, ?, ?, ?, ?, ?'}`).join(' UNION ALL ');
    const now = performance.now();
    await this.database.execute(
      'INSERT INTO webhook_attempts (subscription_id, delivery_id, event_type, attempt, status_code, error, attempted_at, duration_ms) ' +
        `SELECT s.id, a.delivery_id, a.event_type, a.attempt, a.status_code, a.error, ${this.now} - a.began_ms_ago, a.duration_ms ` +
        `FROM (${rows}) a JOIN webhook_subscriptions s ON s.id = a.subscription_id`,
      attempted.flatMap(({ delivery, attempt }) => [
        delivery.subscriptionId,
        delivery.id,
        delivery.type,
        delivery.attempts + 1,
        attempt.statusCode,
        attempt.error,
        Math.max(0, Math.round(now - attempt.startedAt)),
        Math.round(attempt.durationMs),
      ]),
    );
  }

  /**
   * Each delivery's new state, if this instance still holds its claim: those that end (delivered,
   * failed) a statement per state, those tried again later one each, as each has its own time. One
   * resent while its attempt was under way (`resend_after_attempt`) is due again at once instead,
   * its schedule counted from there; one held stays held (a recovery sends it).
   */
  private async updateDeliveries(claim: string, finished: readonly FinishedAttempt[]): Promise<void> {
    const ending = new Map<string, bigint[]>();
    const resent = 'resend_after_attempt = 1';
    for (const item of finished) {
      const { delivery, outcome } = item;
      const made = wasAttempted(item) ? 1 : 0;
      if (outcome.kind === 'retry') {
        // MySQL assigns left to right: the flag is read before it is cleared.
        await this.database.execute(
          `UPDATE webhook_deliveries SET state = 'pending', attempts = ?, ` +
            `retry_from = CASE WHEN ${resent} THEN ? ELSE retry_from END, ` +
            `next_attempt_at = ${this.now} + CASE WHEN ${resent} THEN 0 ELSE ? END, claim = NULL, resend_after_attempt = 0 ` +
            'WHERE id = ? AND claim = ?',
          [delivery.attempts + made, delivery.attempts + made, Math.round(outcome.delayMs), delivery.id, claim],
        );
        continue;
      }
      const key = `${DELIVERY_STATE[outcome.kind]} ${made}`;
      ending.set(key, [...(ending.get(key) ?? []), delivery.id]);
    }
    for (const [key, ids] of ending) {
      const [state, made] = key.split(' ');
      // MySQL assigns left to right: `attempts` and the flag are read before they change.
      const [newState, retryFrom] =
        state === 'held'
          ? ['?', 'retry_from']
          : [
              `CASE WHEN ${resent} THEN 'pending' ELSE ? END`,
              `CASE WHEN ${resent} THEN attempts + ${Number(made)} ELSE retry_from END`,
            ];
      await this.database.execute(
        `UPDATE webhook_deliveries SET state = ${newState}, retry_from = ${retryFrom}, attempts = attempts + ?, ` +
          `next_attempt_at = ${this.now}, claim = NULL, resend_after_attempt = 0 ` +
          `WHERE claim = ? AND id IN (${ids.map(() => '?').join(', ')})`,
        [state, Number(made), claim, ...ids],
      );
    }
  }

  /** Starts, keeps or stops the subscription's failure clock; whether this disabled the subscription. */
  private async updateFailureClock(id: bigint, outcome: AttemptOutcome, disableAfterMs: number): Promise<boolean> {
    if (outcome.kind === 'delivered') {
      // Changes the row only after failures, yet locks it either way (the row is read to be checked).
      await this.database.execute(
        'UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
        [id],
      );
      return false;
    }
    if (outcome.kind === 'disable') return (await this.disable(id, outcome.reason, '')) > 0;
    await this.database.execute(
      `UPDATE webhook_subscriptions SET failing_since = COALESCE(failing_since, ${this.now}) WHERE id = ?`,
      [id],
    );
    const reason = `deliveries failed for ${formatDuration(disableAfterMs)} without a success`;
    const expired = ` AND failing_since <= ${this.now} - ${Math.round(disableAfterMs)}`;
    return (await this.disable(id, reason, expired)) > 0;
  }

  /** What is pending for a subscription just disabled: held, to be sent only if recovered (a resend waiting included). */
  private async holdPending(subscriptionId: bigint): Promise<void> {
    await this.database.execute(
      "UPDATE webhook_deliveries SET state = 'held', claim = NULL, resend_after_attempt = 0 WHERE subscription_id = ? AND state = 'pending'",
      [subscriptionId],
    );
  }

  /**
   * Puts a delivery of the subscription back in the queue, due now, its retry schedule counted
   * anew, whatever state it is in. One being attempted right now (its claim's lease running, on any
   * instance) keeps its claim and is marked to be sent once more after that attempt, whose outcome
   * is recorded (updateDeliveries): the two attempts never run side by side, and each has its own
   * number. `found: false` when the subscription has no such delivery (or no longer: it is kept as
   * long as the retention).
   */
  async resend(subscriptionId: bigint, ref: DeliveryRef): Promise<{ found: boolean; type?: WebhookEvent }> {
    const which = deliveryRef(ref);
    // One statement, so that no claim or outcome comes between telling whether it is under way and
    // acting on it. MySQL assigns left to right: only `claim` and `next_attempt_at` change what
    // `underWay` reads, and they are assigned last, each keeping it false where it was.
    const underWay = `claim IS NOT NULL AND next_attempt_at > ${this.now}`;
    await this.database.execute(
      `UPDATE webhook_deliveries SET resend_after_attempt = CASE WHEN ${underWay} THEN 1 ELSE 0 END, ` +
        `state = CASE WHEN ${underWay} THEN state ELSE 'pending' END, ` +
        `retry_from = CASE WHEN ${underWay} THEN retry_from ELSE attempts END, ` +
        `claim = CASE WHEN ${underWay} THEN claim END, ` +
        `next_attempt_at = CASE WHEN ${underWay} THEN next_attempt_at ELSE ${this.now} END ` +
        `WHERE subscription_id = ? AND ${which.sql}`,
      [subscriptionId, ...which.parameters],
      WRITE,
    );
    const rows = await this.read(
      `SELECT event_type FROM webhook_deliveries WHERE subscription_id = ? AND ${which.sql}`,
      [subscriptionId, ...which.parameters],
    );
    return rows.length > 0 ? { found: true, type: rows[0].event_type as WebhookEvent } : { found: false };
  }

  /**
   * Starts recovering what the subscription failed or held since `since` (epoch ms): the
   * dispatchers put it back in the queue a batch at a time (recoverNext), up to the last delivery
   * recorded now. A recovery under way is replaced.
   */
  async startRecovery(subscriptionId: bigint, since: number): Promise<void> {
    await this.database.execute(
      'UPDATE webhook_subscriptions SET recover_since = ?, recover_after = 0, ' +
        'recover_through = (SELECT MAX(d.id) FROM webhook_deliveries d WHERE d.subscription_id = ?) WHERE id = ?',
      [since, subscriptionId, subscriptionId],
      WRITE,
    );
  }

  /**
   * One step of each recovery under way (of enabled subscriptions, up to `recoveries` of them): the
   * next RECOVER_BATCH of its failed or held deliveries back in the queue, due now, when its
   * subscription has fewer than that pending, so a backlog is sent at the pace the subscription is
   * delivered. A recovery whose cursor passed its last delivery ends. How many deliveries were put back.
   */
  async recoverNext(recoveries: number): Promise<number> {
    const running = await this.read(
      'SELECT id, recover_since, recover_after, recover_through FROM webhook_subscriptions ' +
        'WHERE recover_through IS NOT NULL AND disabled_at IS NULL ORDER BY recover_through LIMIT ?',
      [recoveries],
    );
    let requeued = 0;
    for (const row of running) {
      const key = toBigint(row.id);
      const [through, after, since] = [
        toBigint(row.recover_through),
        toBigint(row.recover_after),
        toNumber(row.recover_since),
      ];
      const [pending] = await this.read(
        "SELECT COUNT(*) AS n FROM (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND subscription_id = ? LIMIT ?) p",
        [key, RECOVER_BATCH],
      );
      if (toNumber(pending.n) >= RECOVER_BATCH) continue;
      const upTo = after + BigInt(RECOVER_ID_WINDOW) < through ? after + BigInt(RECOVER_ID_WINDOW) : through;
      requeued += await this.database.transaction(
        async () => {
          const ids = (
            await this.database.query(
              'SELECT id FROM webhook_deliveries WHERE subscription_id = ? AND id > ? AND id <= ? ' +
                `AND ${RECOVERABLE} AND occurred_at >= ? ORDER BY id LIMIT ?`,
              [key, after, upTo, since, RECOVER_BATCH],
            )
          ).map((found) => toBigint(found.id));
          const cursor = ids.length === RECOVER_BATCH ? ids[ids.length - 1] : upTo;
          // Only if no other recovery replaced this one, nor another instance moved its cursor meanwhile.
          const moved = await this.database.execute(
            cursor >= through
              ? 'UPDATE webhook_subscriptions SET recover_since = NULL, recover_after = NULL, recover_through = NULL ' +
                  'WHERE id = ? AND recover_after = ? AND recover_through = ?'
              : 'UPDATE webhook_subscriptions SET recover_after = ? WHERE id = ? AND recover_after = ? AND recover_through = ?',
            cursor >= through ? [key, after, through] : [cursor, key, after, through],
          );
          if (moved === 0 || ids.length === 0) return 0;
          return this.database.execute(
            `UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ${this.now}, claim = NULL, retry_from = attempts ` +
              `WHERE id IN (${ids.map(() => '?').join(', ')}) AND ${RECOVERABLE}`,
            ids,
          );
        },
        { retry: WRITE },
      );
    }
    return requeued;
  }

  /** Up to `limit` signing secrets in id order after `after`, that do not start with `prefix`. */
  async secretsNotStartingWith(
    prefix: string,
    after: bigint | undefined,
    limit: number,
  ): Promise<{ id: bigint; secret: string }[]> {
    const rows = await this.read(
      'SELECT id, secret FROM webhook_subscriptions WHERE id > ? AND secret NOT LIKE ? ORDER BY id LIMIT ?',
      [after ?? -(2n ** 63n), `${prefix}%`, limit],
    );
    return rows.map((row) => ({ id: toBigint(row.id), secret: String(row.secret) }));
  }

  /** As secretsNotStartingWith, for the secrets a rotation replaced that still sign (those that no longer do are never opened again). */
  async previousSecretsNotStartingWith(
    prefix: string,
    after: bigint | undefined,
    limit: number,
  ): Promise<{ id: bigint; secret: string }[]> {
    const rows = await this.read(
      `SELECT id, previous_secret FROM webhook_subscriptions WHERE id > ? AND previous_secret_expires_at > ${this.now} ` +
        'AND previous_secret NOT LIKE ? ORDER BY id LIMIT ?',
      [after ?? -(2n ** 63n), `${prefix}%`, limit],
    );
    return rows.map((row) => ({ id: toBigint(row.id), secret: String(row.previous_secret) }));
  }

  /** As replaceSecret, for the secret a rotation replaced. */
  async replacePreviousSecret(id: bigint, previous: string, secret: string): Promise<boolean> {
    const sql = 'UPDATE webhook_subscriptions SET previous_secret = ? WHERE id = ? AND previous_secret = ?';
    return (await this.database.execute(sql, [secret, id, previous], WRITE)) > 0;
  }

  /** Writes `secret` in place of `previous`, only if the subscription still holds `previous`; whether it did. */
  async replaceSecret(id: bigint, previous: string, secret: string): Promise<boolean> {
    const sql = 'UPDATE webhook_subscriptions SET secret = ? WHERE id = ? AND secret = ?';
    return (await this.database.execute(sql, [secret, id, previous], WRITE)) > 0;
  }

  /**
   * The deliveries due and not claimed, in the whole database, and how long the one due longest has
   * been waiting (0 when none), by the database's clock.
   */
  async dueBacklog(): Promise<{ due: number; oldestDueMs: number }> {
    const [row] = await this.database.query(
      `SELECT COUNT(*) AS n, ${this.now} - MIN(next_attempt_at) AS waited FROM webhook_deliveries ` +
        `WHERE state = 'pending' AND next_attempt_at <= ${this.now}`,
      [],
    );
    return { due: toNumber(row.n), oldestDueMs: row.waited === null ? 0 : Math.max(0, toNumber(row.waited)) };
  }

  /** Subscriptions in the whole database, enabled and disabled. */
  async countSubscriptions(): Promise<{ enabled: number; disabled: number }> {
    const [row] = await this.database.query(
      'SELECT COUNT(*) AS n, COUNT(disabled_at) AS disabled FROM webhook_subscriptions',
      [],
    );
    return { enabled: toNumber(row.n) - toNumber(row.disabled), disabled: toNumber(row.disabled) };
  }

  /**
   * Forgets finished (and held) deliveries and attempts older than `retentionMs`, and events that
   * occurred longer ago.
   */
  async prune(retentionMs: number): Promise<void> {
    await this.database.execute(`DELETE FROM webhook_events WHERE occurred_at < ${this.now} - ?`, [retentionMs]);
    await this.database.execute(`DELETE FROM webhook_attempts WHERE attempted_at < ${this.now} - ?`, [retentionMs]);
    await this.database.execute(
      `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND next_attempt_at < ${this.now} - ?`,
      [retentionMs],
    );
  }

  private disable(id: bigint, reason: string, condition: string): Promise<number> {
    return this.database.execute(
      `UPDATE webhook_subscriptions SET disabled_at = ${this.now}, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL${condition}`,
      [reason.slice(0, 255), id],
    );
  }

  private read(sql: string, parameters: unknown[]): Promise<Row[]> {
    return this.database.query(sql, parameters, READ);
  }
}

/** The columns of a subscription as the API shows it; the previous secret's expiry only while it signs. */
function subscriptionColumns(now: string): string {
  return (
    'SELECT public_id, url, events, description, created_at, disabled_at, disabled_reason, ' +
    `CASE WHEN previous_secret_expires_at > ${now} THEN previous_secret_expires_at END AS previous_expires_at`
  );
}

function toSubscriptionRow(row: Row): SubscriptionRow {
  return {
    id: toBigint(row.public_id),
    url: String(row.url),
    events: (JSON.parse(String(row.events)) as string[]).filter(isWebhookEvent),
    description: (row.description as string | null) ?? null,
    createdAt: toNumber(row.created_at),
    disabledAt: toNullableNumber(row.disabled_at),
    disabledReason: (row.disabled_reason as string | null) ?? null,
    previousSecretExpiresAt: toNullableNumber(row.previous_expires_at),
  };
}

/**
 * Up to `slots` claim slots dealt among `due` (waiting longest first), one at a time in turn to
 * each that still has room, its owner's room shared by its subscriptions: the subscriptions that
 * get some, with how many, and whether it (and its owner) would have had room for more.
 */
export function shareSlots(
  due: readonly { id: bigint; owner: string }[],
  slots: number,
  room: ClaimRoom,
): { id: bigint; owner: string; slots: number; roomLeft: boolean }[] {
  const shares = due.map((subscription) => ({ ...subscription, slots: 0, room: room.subscription(subscription.id) }));
  const ownerRoom = new Map(due.map(({ owner }) => [owner, room.owner(owner)]));
  let left = slots;
  for (let dealt = true; dealt && left > 0;) {
    dealt = false;
    for (const share of shares) {
      if (left === 0) break;
      if (share.slots >= share.room || ownerRoom.get(share.owner)! <= 0) continue;
      share.slots += 1;
      ownerRoom.set(share.owner, ownerRoom.get(share.owner)! - 1);
      left -= 1;
      dealt = true;
    }
  }
  return shares
    .filter((share) => share.slots > 0)
    .map(({ id, owner, slots: dealt, room: own }) => ({
      id,
      owner,
      slots: dealt,
      roomLeft: dealt < own && ownerRoom.get(owner)! > 0,
    }));
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
