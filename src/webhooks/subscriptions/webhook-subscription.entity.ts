import { int64Transformer } from '../../common/int64';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A webhook subscription as stored (the Webhooks migration and those after it). Its repositories'
 * statements are made from it (SubscriptionsRepository), and the schema test and readiness check
 * it against the database. Times are
 * epoch milliseconds of the database's clock.
 */
@Entity({ name: 'webhook_subscriptions' })
export class WebhookSubscription {
  /** The row's key, which deliveries and attempts refer to; a path may still name it. */
  @PrimaryColumn({ type: 'bigint', transformer: int64Transformer })
  id: bigint;

  /** The id the API shows, within 2^53 - 1 (SubscriptionIdsSafeInJavaScript). */
  @Index('IDX_webhook_subscriptions_public_id', { unique: true })
  @Column({ name: 'public_id', type: 'bigint', nullable: true, transformer: int64Transformer })
  publicId: bigint | null;

  @Index('IDX_webhook_subscriptions_owner')
  @Column({ type: 'varchar', length: 128 })
  owner: string;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** A JSON array of event types. */
  @Column({ type: 'varchar', length: 1024, nullable: true })
  events: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description: string | null;

  /** Sealed under WEBHOOK_SECRET_KEY. */
  @Column({ type: 'varchar', length: 255 })
  secret: string;

  @Column({ name: 'created_at', type: 'bigint' })
  createdAt: string;

  @Column({ name: 'failing_since', type: 'bigint', nullable: true })
  failingSince: string | null;

  @Column({ name: 'disabled_at', type: 'bigint', nullable: true })
  disabledAt: string | null;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 255, nullable: true })
  disabledReason: string | null;

  /** The secret a rotation replaced, sealed as `secret` is; it still signs until `previous_secret_expires_at`. */
  @Column({ name: 'previous_secret', type: 'varchar', length: 255, nullable: true })
  previousSecret: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'bigint', nullable: true })
  previousSecretExpiresAt: string | null;

  /** A recovery under way: deliveries that occurred from `recover_since`, with ids after `recover_after` up to `recover_through`. */
  @Column({ name: 'recover_since', type: 'bigint', nullable: true })
  recoverSince: string | null;

  @Column({ name: 'recover_after', type: 'bigint', nullable: true, transformer: int64Transformer })
  recoverAfter: bigint | null;

  @Index('IDX_webhook_subscriptions_recovering')
  @Column({ name: 'recover_through', type: 'bigint', nullable: true, transformer: int64Transformer })
  recoverThrough: bigint | null;

  /** While a test of its endpoint runs (on any instance), when that test's lease ends: one test at a time. */
  @Column({ name: 'testing_until', type: 'bigint', nullable: true })
  testingUntil: string | null;

  /**
   * The subscription feed's version this subscription was made at (WebhookSubscriptionFeed): what
   * instances poll to learn which owners have a subscription (SubscribedOwners). NULL for one the
   * release before the feed made during an upgrade, which every poll reads.
   */
  @Index('IDX_webhook_subscriptions_feed_version')
  @Column({ name: 'feed_version', type: 'bigint', nullable: true, transformer: int64Transformer })
  feedVersion: bigint | null;
}
