import { int64Transformer } from '../../common/int64';
import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One event for one subscription, recorded with the plant change (EventOutbox) and claimed by the
 * dispatcher. Its repositories' statements are made from it (DeliveriesRepository), and the
 * schema test and readiness check it against the database. Times are epoch milliseconds of the database's clock.
 */
@Entity({ name: 'webhook_deliveries' })
@Index('IDX_webhook_deliveries_due', ['state', 'nextAttemptAt'])
@Index('IDX_webhook_deliveries_subscription', ['subscriptionId', 'id'])
@Index('IDX_webhook_deliveries_claimable', ['state', 'subscriptionId', 'nextAttemptAt'])
export class WebhookDelivery {
  // No transformer: TypeORM takes none on a generated key. Statements read it with BigInt().
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'subscription_id', type: 'bigint', transformer: int64Transformer })
  subscriptionId: bigint;

  @Column({ name: 'event_type', type: 'varchar', length: 32 })
  eventType: string;

  /** The body's `data`, exact JSON. */
  @Column({ type: 'text', nullable: true })
  data: string | null;

  @Column({ name: 'occurred_at', type: 'bigint' })
  occurredAt: string;

  /** pending, delivered, failed, or held (recorded while its subscription was disabled: sent only if recovered). */
  @Column({ type: 'varchar', length: 16 })
  state: string;

  @Column({ type: 'int' })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'bigint' })
  nextAttemptAt: string;

  /** The instance's claim while it holds the delivery. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim: string | null;

  /** The event it carries (webhook_events); NULL for a delivery recorded before events were, whose `webhook-id` is its own. */
  @Index('IDX_webhook_deliveries_event')
  @Column({ name: 'event_id', type: 'bigint', nullable: true, transformer: int64Transformer })
  eventId: bigint | null;

  /** Attempts made before it was last resent or recovered: its retry schedule counts from there. */
  @Column({ name: 'retry_from', type: 'int', nullable: true })
  retryFrom: number | null;

  /** 1 when it was resent while an attempt held it: it is sent once more after that attempt, never beside it. */
  @Column({ name: 'resend_after_attempt', type: 'int', default: 0 })
  resendAfterAttempt: number;
}
