import { Dialect, EntityTable } from '../../database';
import { WebhookEvent } from '../events/events';
import { WebhookSubscription } from '../subscriptions/webhook-subscription.entity';
import { AttemptRow } from './claims';
import { RESENT, compileClaimStatements, listOf } from './claim-statements';
import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';

/** What a delivery may be recovered from: it failed, or was held while its subscription was disabled. */
const RECOVERABLE = "d.state IN ('failed', 'held')";
/** Columns of an attempt that a finished attempt gives (attemptedAt: now less how long ago it began). */
const ATTEMPT_COLUMNS = [
  'subscriptionId',
  'deliveryId',
  'eventType',
  'attempt',
  'statusCode',
  'error',
  'attemptedAt',
  'durationMs',
] as const;

/**
 * The statements of DeliveriesRepository, made from the entities with TypeORM's query builder when
 * the repository is made, at start-up; those whose text follows the size of a batch (a list of ids),
 * once per size. `now` is the database's clock (NOW_MS).
 */
export function compileDeliveryStatements(
  deliveries: EntityTable<WebhookDelivery>,
  attempts: EntityTable<WebhookAttempt>,
  subscriptions: EntityTable<WebhookSubscription>,
  now: string,
  dialect: Dialect,
) {
  const d = deliveries;
  const update = () => d.update();

  const readAttemptColumns = attempts.reader(ATTEMPT_COLUMNS.filter((column) => column !== 'subscriptionId'));
  const readEventId = d.reader(['eventId']);
  const readAttempt = (row: Record<string, unknown>): AttemptRow => {
    const attempt = readAttemptColumns(row);
    return {
      deliveryId: attempt.deliveryId!,
      eventId: readEventId(row).eventId ?? null,
      type: attempt.eventType as WebhookEvent,
      attempt: Number(attempt.attempt),
      statusCode: attempt.statusCode === undefined ? null : Number(attempt.statusCode),
      error: attempt.error ?? null,
      attemptedAt: Number(attempt.attemptedAt),
      durationMs: Number(attempt.durationMs),
    };
  };

  /**
   * A resend of one delivery, in one statement, so that no claim or outcome comes between telling
   * whether it is under way and acting on it. MySQL assigns left to right: only `claim` and
   * `nextAttemptAt` change what `underWay` reads, and they are assigned last, each keeping it false
   * where it was.
   */
  const resendBy = (which: string) => {
    const underWay = `claim IS NOT NULL AND nextAttemptAt > ${now}`;
    const where = `subscriptionId = :subscription AND ${which}`;
    return {
      resend: d.compile(
        update()
          .set({
            resendAfterAttempt: () => `CASE WHEN ${underWay} THEN 1 ELSE 0 END`,
            state: () => `CASE WHEN ${underWay} THEN state ELSE 'pending' END`,
            retryFrom: () => `CASE WHEN ${underWay} THEN retryFrom ELSE attempts END`,
            claim: () => `CASE WHEN ${underWay} THEN claim END`,
            nextAttemptAt: () => `CASE WHEN ${underWay} THEN nextAttemptAt ELSE ${now} END`,
          })
          .where(where),
        ['subscription', 'id'],
      ),
      resentType: d.compile(
        d.select('d', ['eventType']).where(where.replace(/(?<![:.\w])(subscriptionId|eventId|id) /g, 'd.$1 ')),
        ['subscription', 'id'],
      ),
    };
  };

  /** Each delivery ending (delivered, failed) after an attempt, its `attempts` counting the attempt if one was made. */
  const end = (count: number) => {
    const ids = listOf('id', count);
    // MySQL assigns left to right: `attempts` and the flag are read before they change.
    return d.compile(
      update()
        .set({
          state: () => `CASE WHEN ${RESENT} THEN 'pending' ELSE :state END`,
          retryFrom: () => `CASE WHEN ${RESENT} THEN attempts + :made ELSE retryFrom END`,
          attempts: () => 'attempts + :made',
          nextAttemptAt: () => now,
          claim: () => 'NULL',
          resendAfterAttempt: () => '0',
        })
        .where(`claim = :claim AND id IN (${ids.sql})`),
      ['state', 'made', 'made', 'claim', ...ids.names],
    );
  };
  const hold = (count: number) => {
    const ids = listOf('id', count);
    return d.compile(
      update()
        .set({
          state: () => "'held'",
          attempts: () => 'attempts + :made',
          nextAttemptAt: () => now,
          claim: () => 'NULL',
          resendAfterAttempt: () => '0',
        })
        .where(`claim = :claim AND id IN (${ids.sql})`),
      ['made', 'claim', ...ids.names],
    );
  };

  /**
   * The attempts of a batch, one row each, in one statement; only of subscriptions still there.
   * The query builder makes no INSERT ... SELECT: the text is written from the entities' names.
   */
  const insertAttempts = (count: number) => {
    const values =
      'SELECT ? AS subscriptionId, ? AS deliveryId, ? AS eventType, ? AS attempt, ? AS statusCode, ? AS error, ? AS beganMsAgo, ? AS durationMs';
    const rows = Array.from({ length: count }, (_, i) => (i === 0 ? values : 'SELECT ?, ?, ?, ?, ?, ?, ?, ?'));
    return (
      `INSERT INTO ${attempts.name} (${attempts.columnList(ATTEMPT_COLUMNS)}) ` +
      `SELECT s.${subscriptions.column('id')}, a.deliveryId, a.eventType, a.attempt, a.statusCode, a.error, ` +
      `${now} - a.beganMsAgo, a.durationMs FROM (${rows.join(' UNION ALL ')}) a ` +
      `JOIN ${subscriptions.name} s ON s.${subscriptions.column('id')} = a.subscriptionId`
    );
  };

  const s = subscriptions;
  const disableWhere = (condition: string) =>
    s.compile(
      s
        .update()
        .set({ disabledAt: () => now, disabledReason: () => ':reason' })
        .where(`id = :key AND disabledAt IS NULL${condition}`),
      ['reason', 'key', ...(condition ? ['ms'] : [])],
    );

  return {
    ...compileClaimStatements(deliveries, subscriptions, now, dialect),
    insertAttempts: (count: number) => d.shapedStatement(`attempts ${count}`, () => insertAttempts(count)),
    retryLater: d.compile(
      // MySQL assigns left to right: the flag is read before it is cleared.
      update()
        .set({
          state: () => "'pending'",
          attempts: () => ':attempts',
          retryFrom: () => `CASE WHEN ${RESENT} THEN :retryFrom ELSE retryFrom END`,
          nextAttemptAt: () => `${now} + CASE WHEN ${RESENT} THEN 0 ELSE :delay END`,
          claim: () => 'NULL',
          resendAfterAttempt: () => '0',
        })
        .where('id = :id AND claim = :claim'),
      ['attempts', 'retryFrom', 'delay', 'id', 'claim'],
    ),
    end: (count: number) => d.shapedStatement(`end ${count}`, () => end(count)),
    hold: (count: number) => d.shapedStatement(`hold ${count}`, () => hold(count)),
    holdPending: d.compile(
      update()
        .set({ state: () => "'held'", claim: () => 'NULL', resendAfterAttempt: () => '0' })
        .where("subscriptionId = :subscription AND state = 'pending'"),
      ['subscription'],
    ),
    forgetDeliveries: d.compile(d.delete().where('subscriptionId = :subscription'), ['subscription']),
    forgetAttempts: attempts.compile(attempts.delete().where('subscriptionId = :subscription'), ['subscription']),
    stopFailureClock: s.compile(
      s
        .update()
        .set({ failingSince: () => 'NULL' })
        .where('id = :key AND failingSince IS NOT NULL'),
      ['key'],
    ),
    startFailureClock: s.compile(
      s
        .update()
        .set({ failingSince: () => `COALESCE(failingSince, ${now})` })
        .where('id = :key'),
      ['key'],
    ),
    disable: disableWhere(''),
    disableFailing: disableWhere(` AND failingSince <= ${now} - :ms`),
    byEvent: resendBy('eventId = :id'),
    byDelivery: resendBy('id = :id AND eventId IS NULL'),
    startRecovery: s.compile(
      s
        .update()
        .set({
          recoverSince: () => ':since',
          recoverAfter: () => '0',
          recoverThrough: () =>
            `(SELECT MAX(d.${d.column('id')}) FROM ${d.name} d WHERE d.${d.column('subscriptionId')} = :subscription)`,
        })
        .where('id = :key'),
      ['since', 'subscription', 'key'],
    ),
    recoveries: `${s.compile(
      s
        .select('s', ['id', 'recoverSince', 'recoverAfter', 'recoverThrough'])
        .where('s.recoverThrough IS NOT NULL AND s.disabledAt IS NULL')
        .orderBy('s.recoverThrough'),
      [],
    )} LIMIT ?`,
    readRecovery: s.reader(['id', 'recoverSince', 'recoverAfter', 'recoverThrough']),
    pendingCount: `SELECT COUNT(*) AS n FROM (${d.compile(
      d.select('d', ['id']).where("d.state = 'pending' AND d.subscriptionId = :subscription"),
      ['subscription'],
    )} LIMIT ?) p`,
    recoverable: `${d.compile(
      d
        .select('d', ['id'])
        .where(`d.subscriptionId = :subscription AND d.id > :after AND d.id <= :upTo AND ${RECOVERABLE}`)
        .andWhere('d.occurredAt >= :since')
        .orderBy('d.id'),
      ['subscription', 'after', 'upTo', 'since'],
    )} LIMIT ?`,
    // Only if no other recovery replaced this one, nor another instance moved its cursor meanwhile.
    endRecovery: s.compile(
      s
        .update()
        .set({ recoverSince: () => 'NULL', recoverAfter: () => 'NULL', recoverThrough: () => 'NULL' })
        .where('id = :key AND recoverAfter = :after AND recoverThrough = :through'),
      ['key', 'after', 'through'],
    ),
    moveRecovery: s.compile(
      s
        .update()
        .set({ recoverAfter: () => ':cursor' })
        .where('id = :key AND recoverAfter = :after AND recoverThrough = :through'),
      ['cursor', 'key', 'after', 'through'],
    ),
    requeue: (count: number) =>
      d.shapedStatement(`requeue ${count}`, () => {
        const ids = listOf('id', count);
        return d.compile(
          update()
            .set({
              state: () => "'pending'",
              nextAttemptAt: () => now,
              claim: () => 'NULL',
              retryFrom: () => 'attempts',
            })
            .where(`id IN (${ids.sql}) AND state IN ('failed', 'held')`),
          ids.names,
        );
      }),
    recentAttempts: `${attempts.compile(
      attempts
        .select('a', ['deliveryId', 'eventType', 'attempt', 'statusCode', 'error', 'attemptedAt', 'durationMs'])
        .leftJoin(WebhookDelivery, 'd', 'd.id = a.deliveryId')
        .addSelect('d.eventId', 'eventId')
        .where('a.subscriptionId = :subscription')
        .orderBy('a.id', 'DESC'),
      ['subscription'],
    )} LIMIT ?`,
    readAttempt,
    dueBacklog: d.compile(
      d
        .select('d', [])
        .addSelect('COUNT(*)', 'n')
        .addSelect(`${now} - MIN(d.nextAttemptAt)`, 'waited')
        .where(`d.state = 'pending' AND d.nextAttemptAt <= ${now}`),
      [],
    ),
    pruneAttempts: attempts.compile(attempts.delete().where(`attemptedAt < ${now} - :retention`), ['retention']),
    pruneDeliveries: d.compile(d.delete().where(`state <> 'pending' AND nextAttemptAt < ${now} - :retention`), [
      'retention',
    ]),
  };
}
