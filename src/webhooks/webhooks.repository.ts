import { Injectable } from '@nestjs/common';
import { int64Transformer } from '../common/int64';
import { Condition, Database, IsolationLevel, NOW_MS, PerDialect, READ, Row, WRITE } from '../database';
import { WebhookEvent, isWebhookEvent } from './events';

const dueDeliveries = (now: string) =>
  `SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ${now} ORDER BY next_attempt_at LIMIT ?`;
/**
 * On MySQL/MariaDB, rows another instance is claiming at the same moment are skipped rather than
 * waited for; SQLite has one writer at a time.
 */
const CLAIM_DUE: PerDialect<string> = {
  mysql: `${dueDeliveries(NOW_MS.mysql)} FOR UPDATE SKIP LOCKED`,
  sqlite: dueDeliveries(NOW_MS.sqlite),
};
const CLAIM_ISOLATION: PerDialect<IsolationLevel> = { mysql: 'READ COMMITTED', sqlite: 'SERIALIZABLE' };

/**
 * The subscriptions of the owner (the first parameter) that are enabled and want `type`: `events`
 * is a JSON array of event types, matched as its quoted member.
 */
function wants(type: WebhookEvent): string {
  return `s.events LIKE '%"${type}"%'`;
}
const WANTING = 's.owner = ? AND s.disabled_at IS NULL AND ';
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

export interface SubscriptionRow {
  /** The id the API shows. */
  id: bigint;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  createdAt: number;
  disabledAt: number | null;
  disabledReason: string | null;
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
  subscriptionId: bigint;
  type: WebhookEvent;
  /** The body's `data`, as recorded with the change (exact JSON). */
  data: string;
  occurredAt: number;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  sealedSecret: string;
  disabled: boolean;
}

export type AttemptOutcome =
  /** 2xx. */
  | { kind: 'delivered' }
  /** Another attempt after `delayMs`. */
  | { kind: 'retry'; delayMs: number }
  /** No attempts left. */
  | { kind: 'failed' }
  /** 410 Gone, or the subscription was already disabled: disable it and drop what is pending. */
  | { kind: 'disable'; reason: string };

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
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
    const rows = (await this.read(
      'SELECT public_id, url, events, description, created_at, disabled_at, disabled_reason ' +
        'FROM webhook_subscriptions WHERE owner = ? ORDER BY public_id',
      [owner],
    )) as Row[];
    return rows.map((row) => ({
      id: toBigint(row.public_id),
      url: String(row.url),
      events: (JSON.parse(String(row.events)) as string[]).filter(isWebhookEvent),
      description: (row.description as string | null) ?? null,
      createdAt: toNumber(row.created_at),
      disabledAt: toNullableNumber(row.disabled_at),
      disabledReason: (row.disabled_reason as string | null) ?? null,
    }));
  }

  /** The key of the owner's subscription that a path's id names (see BY_PATH_ID), if there is one. */
  async findSubscription(owner: string, id: bigint): Promise<bigint | undefined> {
    const rows = (await this.read(`SELECT id FROM webhook_subscriptions WHERE ${BY_PATH_ID}`, [
      owner,
      id,
      id,
    ])) as Row[];
    return rows.length > 0 ? toBigint(rows[0].id) : undefined;
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
   * One delivery of each event for every enabled subscription of `owner` that wants it, due now;
   * how many. Run in the change's transaction (EventOutbox); the subscriptions are read, not locked.
   */
  async recordEvents(owner: string, events: readonly { type: WebhookEvent; data: string }[]): Promise<number> {
    let recorded = 0;
    for (const { type, data } of events) {
      recorded += await this.database.execute(
        'INSERT INTO webhook_deliveries (subscription_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
          `SELECT s.id, ?, ?, ${this.now}, 'pending', 0, ${this.now} FROM webhook_subscriptions s WHERE ${WANTING}${wants(type)}`,
        [type, data, owner],
      );
    }
    return recorded;
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
    const rows = (await this.read(
      'SELECT delivery_id, event_type, attempt, status_code, error, attempted_at, duration_ms ' +
        'FROM webhook_attempts WHERE subscription_id = ? ORDER BY id DESC LIMIT ?',
      [subscriptionId, limit],
    )) as Row[];
    return rows.map((row) => ({
      deliveryId: toBigint(row.delivery_id),
      type: row.event_type as WebhookEvent,
      attempt: toNumber(row.attempt),
      statusCode: toNullableNumber(row.status_code),
      error: (row.error as string | null) ?? null,
      attemptedAt: toNumber(row.attempted_at),
      durationMs: toNumber(row.duration_ms),
    }));
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`: they are not due again until the lease ends,
   * so an instance that dies holding them gives them back by itself (see CLAIM_DUE); on Galera two
   * nodes may still pick the same row, and one of the two commits fails certification and claims
   * nothing this time.
   */
  async claimDue(limit: number, leaseMs: number, claim: string): Promise<ClaimedDelivery[]> {
    const ids = await this.database.transaction(
      async () => {
        const due = await this.database.query(CLAIM_DUE, [limit]);
        if (due.length === 0) return [];
        const ids = due.map((row) => toBigint(row.id));
        await this.database.execute(
          `UPDATE webhook_deliveries SET claim = ?, next_attempt_at = ${this.now} + ? WHERE id IN (${ids.map(() => '?').join(', ')})`,
          [claim, leaseMs, ...ids],
        );
        return ids;
      },
      { isolation: CLAIM_ISOLATION },
    );
    if (ids.length === 0) return [];
    const rows = (await this.read(
      'SELECT d.id, d.subscription_id, d.event_type, d.data, d.occurred_at, d.attempts, ' +
        's.url, s.secret, s.disabled_at FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id ' +
        `WHERE d.claim = ? AND d.id IN (${ids.map(() => '?').join(', ')}) ORDER BY d.id`,
      [claim, ...ids],
    )) as Row[];
    return rows.map((row) => ({
      id: toBigint(row.id),
      subscriptionId: toBigint(row.subscription_id),
      type: row.event_type as WebhookEvent,
      data: String(row.data),
      occurredAt: toNumber(row.occurred_at),
      attempts: toNumber(row.attempts),
      url: String(row.url),
      sealedSecret: String(row.secret),
      disabled: row.disabled_at !== null && row.disabled_at !== undefined,
    }));
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
        for (const id of disabled) {
          await this.database.execute(
            "UPDATE webhook_deliveries SET state = 'failed', claim = NULL WHERE subscription_id = ? AND state = 'pending'",
            [id],
          );
        }
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
   * its history went with it.
   */
  private async insertAttempts(attempted: readonly FinishedAttempt[]): Promise<void> {
    const row =
      '? AS subscription_id, ? AS delivery_id, ? AS event_type, ? AS attempt, ? AS status_code, ? AS error, ? AS duration_ms';
    const rows = attempted.map((_, i) => `SELECT ${i === 0 ? row : '?, ?, ?, ?, ?, ?, ?'}`).join(' UNION ALL ');
    await this.database.execute(
      'INSERT INTO webhook_attempts (subscription_id, delivery_id, event_type, attempt, status_code, error, attempted_at, duration_ms) ' +
        `SELECT s.id, a.delivery_id, a.event_type, a.attempt, a.status_code, a.error, ${this.now}, a.duration_ms ` +
        `FROM (${rows}) a JOIN webhook_subscriptions s ON s.id = a.subscription_id`,
      attempted.flatMap(({ delivery, attempt }) => [
        delivery.subscriptionId,
        delivery.id,
        delivery.type,
        delivery.attempts + 1,
        attempt.statusCode,
        attempt.error,
        Math.round(attempt.durationMs),
      ]),
    );
  }

  /**
   * Each delivery's new state, if this instance still holds its claim: those that end (delivered,
   * failed) a statement per state, those tried again later one each, as each has its own time.
   */
  private async updateDeliveries(claim: string, finished: readonly FinishedAttempt[]): Promise<void> {
    const ending = new Map<string, bigint[]>();
    for (const item of finished) {
      const { delivery, outcome } = item;
      const made = wasAttempted(item) ? 1 : 0;
      if (outcome.kind === 'retry') {
        await this.database.execute(
          `UPDATE webhook_deliveries SET state = 'pending', attempts = ?, next_attempt_at = ${this.now} + ?, claim = NULL ` +
            'WHERE id = ? AND claim = ?',
          [delivery.attempts + made, Math.round(outcome.delayMs), delivery.id, claim],
        );
        continue;
      }
      const key = `${DELIVERY_STATE[outcome.kind]} ${made}`;
      ending.set(key, [...(ending.get(key) ?? []), delivery.id]);
    }
    for (const [key, ids] of ending) {
      const [state, made] = key.split(' ');
      await this.database.execute(
        `UPDATE webhook_deliveries SET state = ?, attempts = attempts + ?, next_attempt_at = ${this.now}, claim = NULL ` +
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

  /** Deliveries waiting for an attempt whose time has come. */
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

  /** Forgets finished deliveries and attempts older than `retentionMs`. */
  async prune(retentionMs: number): Promise<void> {
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
