import { Injectable } from '@nestjs/common';
import { Database, NOW_MS, READ, READ_COMMITTED, WRITE } from '../../database';
import { WebhookEvent } from '../events/events';
import { WebhookSubscription } from '../subscriptions/webhook-subscription.entity';
import { MAX_SUBSCRIPTIONS_PER_CLAIM, RECOVER_BATCH, RECOVER_ID_WINDOW } from '../webhooks.limits';
import {
  AttemptOutcome,
  AttemptRecord,
  AttemptRow,
  ClaimRoom,
  ClaimedDelivery,
  Claimed,
  DeliveryRef,
  FinishedAttempt,
  NO_CAPS,
  formatDuration,
  shareSlots,
  wasAttempted,
} from './claims';
import { compileDeliveryStatements } from './delivery-statements';
import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';

const DELIVERY_STATE: Record<AttemptOutcome['kind'], string> = {
  delivered: 'delivered',
  retry: 'pending',
  failed: 'failed',
  disable: 'failed',
  hold: 'held',
};

/**
 * The deliveries (one per event and subscription, recorded with the plant change, see EventOutbox)
 * and the attempts made, with the columns of a subscription that its deliveries drive (its failure
 * clock, the recovery under way). The statements are made from the entities with TypeORM's query
 * builder once, at start-up (delivery-statements.ts); those whose text follows a batch's size, once
 * per size. Times are epoch milliseconds; those that decide when something is due are taken from
 * the database's clock.
 */
@Injectable()
export class DeliveriesRepository {
  private readonly statements: ReturnType<typeof compileDeliveryStatements>;

  constructor(private readonly database: Database) {
    this.statements = compileDeliveryStatements(
      database.table(WebhookDelivery),
      database.table(WebhookAttempt),
      database.table(WebhookSubscription),
      database.sql(NOW_MS),
      database.dialect,
    );
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`, shared among the subscriptions with
   * something due, those waiting longest first: each is given a slot in turn while it has room
   * (`room`: what it, and its owner, may still have in flight), so one subscription's backlog never
   * takes the slots others are due. They are not due again until the lease ends, so an instance
   * that dies holding them gives them back by itself (see claimDue in delivery-statements.ts); on
   * Galera two nodes may still pick the same row, and one of the two commits fails certification
   * and claims nothing this time.
   */
  async claimDue(limit: number, leaseMs: number, claim: string, room: ClaimRoom = NO_CAPS): Promise<Claimed> {
    const { statements } = this;
    const due = await this.database.query(statements.dueSubscriptions, [MAX_SUBSCRIPTIONS_PER_CLAIM + 1], READ);
    const truncated = due.length > MAX_SUBSCRIPTIONS_PER_CLAIM;
    const shares = shareSlots(
      due
        .slice(0, MAX_SUBSCRIPTIONS_PER_CLAIM)
        .filter((row) => row.owner != null)
        .map((row) => ({ id: BigInt(row.subscriptionId as string), owner: String(row.owner) })),
      limit,
      room,
    );
    if (shares.length === 0) return { deliveries: [], more: truncated };
    const taken = await this.database.transaction(
      async () => {
        const taken: { share: (typeof shares)[number]; ids: bigint[] }[] = [];
        for (const share of shares) {
          const rows = await this.database.query(statements.claimDue, [share.id, share.slots]);
          taken.push({ share, ids: rows.map((row) => BigInt(row.id as string)) });
        }
        const ids = taken.flatMap(({ ids }) => ids);
        if (ids.length > 0) await this.database.execute(statements.claim(ids.length), [claim, leaseMs, ...ids]);
        return taken;
      },
      // The claim's reads take no locks but on the rows they claim.
      { isolation: READ_COMMITTED },
    );
    // A subscription that filled its share while it, and its owner, had room for more may have more due.
    const more = truncated || taken.some(({ share, ids }) => ids.length === share.slots && share.roomLeft);
    const ids = taken.flatMap(({ ids }) => ids);
    if (ids.length === 0) return { deliveries: [], more };
    const rows = await this.database.query(statements.claimed(ids.length), [claim, ...ids], READ);
    return { deliveries: rows.map(statements.readClaimed), more };
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

  /** What is pending for a subscription just disabled: held, to be sent only if recovered (a resend waiting included). */
  async holdPending(subscriptionId: bigint): Promise<void> {
    await this.database.execute(this.statements.holdPending, [subscriptionId]);
  }

  /** Everything recorded for a subscription that is deleted: its deliveries and attempts. */
  async forgetSubscription(subscriptionId: bigint): Promise<void> {
    await this.database.execute(this.statements.forgetDeliveries, [subscriptionId]);
    await this.database.execute(this.statements.forgetAttempts, [subscriptionId]);
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
    const [byEvent, id] = 'eventId' in ref ? [true, ref.eventId] : [false, ref.deliveryId];
    const { resend, resentType } = byEvent ? this.statements.byEvent : this.statements.byDelivery;
    await this.database.execute(resend, [subscriptionId, id], WRITE);
    const [row] = await this.database.query(resentType, [subscriptionId, id], READ);
    return row === undefined ? { found: false } : { found: true, type: row.eventType as WebhookEvent };
  }

  /**
   * Starts recovering what the subscription failed or held since `since` (epoch ms): the
   * dispatchers put it back in the queue a batch at a time (recoverNext), up to the last delivery
   * recorded now. A recovery under way is replaced.
   */
  async startRecovery(subscriptionId: bigint, since: number): Promise<void> {
    await this.database.execute(this.statements.startRecovery, [since, subscriptionId, subscriptionId], WRITE);
  }

  /**
   * One step of each recovery under way (of enabled subscriptions, up to `recoveries` of them): the
   * next RECOVER_BATCH of its failed or held deliveries back in the queue, due now, when its
   * subscription has fewer than that pending, so a backlog is sent at the pace the subscription is
   * delivered. A recovery whose cursor passed its last delivery ends. How many deliveries were put back.
   */
  async recoverNext(recoveries: number): Promise<number> {
    const { statements } = this;
    const running = (await this.database.query(statements.recoveries, [recoveries], READ)).map(statements.readRecovery);
    let requeued = 0;
    for (const recovery of running) {
      const [key, through, after, since] = [
        recovery.id!,
        recovery.recoverThrough!,
        recovery.recoverAfter!,
        Number(recovery.recoverSince),
      ];
      const [pending] = await this.database.query(statements.pendingCount, [key, RECOVER_BATCH], READ);
      if (Number(pending.n) >= RECOVER_BATCH) continue;
      const upTo = after + BigInt(RECOVER_ID_WINDOW) < through ? after + BigInt(RECOVER_ID_WINDOW) : through;
      requeued += await this.database.transaction(
        async () => {
          const ids = (await this.database.query(statements.recoverable, [key, after, upTo, since, RECOVER_BATCH])).map(
            (found) => BigInt(found.id as string),
          );
          const cursor = ids.length === RECOVER_BATCH ? ids[ids.length - 1] : upTo;
          // Only if no other recovery replaced this one, nor another instance moved its cursor meanwhile.
          const moved =
            cursor >= through
              ? await this.database.execute(statements.endRecovery, [key, after, through])
              : await this.database.execute(statements.moveRecovery, [cursor, key, after, through]);
          if (moved === 0 || ids.length === 0) return 0;
          return this.database.execute(statements.requeue(ids.length), ids);
        },
        { retry: WRITE },
      );
    }
    return requeued;
  }

  async recentAttempts(subscriptionId: bigint, limit: number): Promise<AttemptRow[]> {
    const rows = await this.database.query(this.statements.recentAttempts, [subscriptionId, limit], READ);
    return rows.map(this.statements.readAttempt);
  }

  /**
   * The deliveries due and not claimed, in the whole database, and how long the one due longest has
   * been waiting (0 when none), by the database's clock.
   */
  async dueBacklog(): Promise<{ due: number; oldestDueMs: number }> {
    const [row] = await this.database.query(this.statements.dueBacklog, []);
    return { due: Number(row.n), oldestDueMs: row.waited == null ? 0 : Math.max(0, Number(row.waited)) };
  }

  /** Forgets finished (and held) deliveries and attempts older than `retentionMs`. */
  async prune(retentionMs: number): Promise<void> {
    await this.database.execute(this.statements.pruneAttempts, [retentionMs]);
    await this.database.execute(this.statements.pruneDeliveries, [retentionMs]);
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

  /** Starts, keeps or stops the subscription's failure clock; whether this disabled the subscription. */
  private async updateFailureClock(id: bigint, outcome: AttemptOutcome, disableAfterMs: number): Promise<boolean> {
    const { statements } = this;
    if (outcome.kind === 'delivered') {
      // Changes the row only after failures, yet locks it either way (the row is read to be checked).
      await this.database.execute(statements.stopFailureClock, [id]);
      return false;
    }
    if (outcome.kind === 'disable') {
      return (await this.database.execute(statements.disable, [outcome.reason.slice(0, 255), id])) > 0;
    }
    await this.database.execute(statements.startFailureClock, [id]);
    const reason = `deliveries failed for ${formatDuration(disableAfterMs)} without a success`;
    const disabled = await this.database.execute(statements.disableFailing, [reason, id, Math.round(disableAfterMs)]);
    return disabled > 0;
  }

  /**
   * One row per attempt, in one statement; not for a subscription deleted while the attempt ran:
   * its history went with it. `attempted_at` is when the attempt began, on the database's clock: now,
   * less the time since it began as this process measured it.
   */
  private async insertAttempts(attempted: readonly FinishedAttempt[]): Promise<void> {
    const now = performance.now();
    await this.database.execute(
      this.statements.insertAttempts(attempted.length),
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
    for (const item of finished) {
      const { delivery, outcome } = item;
      const made = wasAttempted(item) ? 1 : 0;
      if (outcome.kind === 'retry') {
        const attempts = delivery.attempts + made;
        await this.database.execute(this.statements.retryLater, [
          attempts,
          attempts,
          Math.round(outcome.delayMs),
          delivery.id,
          claim,
        ]);
        continue;
      }
      const key = `${DELIVERY_STATE[outcome.kind]} ${made}`;
      ending.set(key, [...(ending.get(key) ?? []), delivery.id]);
    }
    for (const [key, ids] of ending) {
      const [state, made] = key.split(' ');
      await (state === 'held'
        ? this.database.execute(this.statements.hold(ids.length), [Number(made), claim, ...ids])
        : this.database.execute(this.statements.end(ids.length), [state, Number(made), Number(made), claim, ...ids]));
    }
  }
}
