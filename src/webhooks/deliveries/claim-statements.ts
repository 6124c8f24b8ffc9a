import { Dialect, EntityTable } from '../../database';
import { WebhookEvent } from '../events/events';
import { WebhookSubscription } from '../subscriptions/webhook-subscription.entity';
import { ClaimedDelivery } from './claims';
import { WebhookDelivery } from './webhook-delivery.entity';

/** Set while an attempt holds the delivery: it is sent once more after that attempt. */
export const RESENT = 'resendAfterAttempt = 1';

/** Named parameters `:<name>0, :<name>1, ...` for a list of `count` values, and their names in order. */
export function listOf(name: string, count: number): { sql: string; names: string[] } {
  const names = Array.from({ length: count }, (_, i) => `${name}${i}`);
  return { sql: names.map((each) => `:${each}`).join(', '), names };
}

/**
 * The statements of a claim of due deliveries (DeliveriesRepository.claimDue): which subscriptions
 * have something due, the due deliveries of one, taking them, and reading what sending them needs.
 * Made from the entities with TypeORM's query builder when the repository is made; those whose text
 * follows how many deliveries a claim took, once per count.
 */
export function compileClaimStatements(
  deliveries: EntityTable<WebhookDelivery>,
  subscriptions: EntityTable<WebhookSubscription>,
  now: string,
  dialect: Dialect,
) {
  const d = deliveries;
  const update = () => d.update();

  /**
   * The subscriptions with a delivery due, each with the time its oldest became due and its owner,
   * those waiting longest first. `state` is compared as a range rather than for equality so that
   * MySQL/MariaDB read one entry of IDX_webhook_deliveries_claimable per subscription (a loose index
   * scan, "Using index for group-by") instead of every pending row: a subscription with a deep
   * backlog costs a claim what one with a single due delivery costs. A subscription is due when the
   * earliest of its pending deliveries is.
   */
  const dueSubscriptions = `${d.compile(
    d
      .select('d', ['subscriptionId'])
      .addSelect('MIN(d.nextAttemptAt)', 'due')
      .addSelect(
        (owner) => owner.select('s.owner').from(WebhookSubscription, 's').where('s.id = d.subscriptionId'),
        'owner',
      )
      .where("d.state BETWEEN 'pending' AND 'pending'")
      .groupBy('d.state')
      .addGroupBy('d.subscriptionId')
      .having(`MIN(d.nextAttemptAt) <= ${now}`)
      .orderBy('due'),
    [],
  )} LIMIT ?`;

  /**
   * Up to `limit` due deliveries of one subscription, those due longest first. On MySQL/MariaDB,
   * rows another instance is claiming at the same moment are skipped rather than waited for
   * (TypeORM's lock clause, after the LIMIT, which the query builder would write as a number);
   * SQLite has one writer at a time, and TypeORM no lock for it.
   */
  const dueOf = d
    .select('d', ['id'])
    .where(`d.state = 'pending' AND d.subscriptionId = :subscription AND d.nextAttemptAt <= ${now}`)
    .orderBy('d.nextAttemptAt');
  const unlocked = d.compile(dueOf, ['subscription']);
  const lock =
    dialect === 'mysql'
      ? d
          .compile(dueOf.clone().setLock('pessimistic_write').setOnLocked('skip_locked'), ['subscription'])
          .slice(unlocked.length)
      : '';
  const claimDue = `${unlocked} LIMIT ?${lock}`;

  const claimedColumns = [
    'id',
    'eventId',
    'subscriptionId',
    'eventType',
    'data',
    'occurredAt',
    'attempts',
    'retryFrom',
  ] as const;
  // int columns come back as the driver gives them (a bigint from better-sqlite3): read with Number().
  const readDelivery = d.reader(claimedColumns);
  const readSubscription = subscriptions.reader(['owner', 'url', 'secret', 'disabledAt', 'previousSecret']);
  const readClaimed = (row: Record<string, unknown>): ClaimedDelivery => {
    const delivery = readDelivery(row);
    const subscription = readSubscription(row);
    return {
      id: BigInt(delivery.id!),
      eventId: delivery.eventId ?? null,
      subscriptionId: delivery.subscriptionId!,
      owner: subscription.owner!,
      type: delivery.eventType as WebhookEvent,
      data: delivery.data!,
      occurredAt: Number(delivery.occurredAt),
      attempts: Number(delivery.attempts),
      retryFrom: Number(delivery.retryFrom ?? 0),
      url: subscription.url!,
      sealedSecret: subscription.secret!,
      previousSealedSecret: subscription.previousSecret ?? null,
      disabled: subscription.disabledAt !== undefined,
    };
  };

  return {
    dueSubscriptions,
    claimDue,
    claim: (count: number) =>
      d.shapedStatement(`claim ${count}`, () => {
        const ids = listOf('id', count);
        // A resend that waited for an attempt whose lease ended without an outcome (its instance
        // died): this attempt is the one after it, the first of its schedule.
        return d.compile(
          update()
            .set({
              claim: () => ':claim',
              nextAttemptAt: () => `${now} + :lease`,
              retryFrom: () => `CASE WHEN ${RESENT} THEN attempts ELSE retryFrom END`,
              resendAfterAttempt: () => '0',
            })
            .where(`id IN (${ids.sql})`),
          ['claim', 'lease', ...ids.names],
        );
      }),
    claimed: (count: number) =>
      d.shapedStatement(`claimed ${count}`, () => {
        const ids = listOf('id', count);
        return d.compile(
          d
            .select('d', claimedColumns)
            .innerJoin(WebhookSubscription, 's', 's.id = d.subscriptionId')
            .addSelect('s.owner', 'owner')
            .addSelect('s.url', 'url')
            .addSelect('s.secret', 'secret')
            .addSelect('s.disabledAt', 'disabledAt')
            .addSelect(`CASE WHEN s.previousSecretExpiresAt > ${now} THEN s.previousSecret END`, 'previousSecret')
            .where(`d.claim = :claim AND d.id IN (${ids.sql})`)
            .orderBy('d.id'),
          ['claim', ...ids.names],
        );
      }),
    readClaimed,
  };
}
