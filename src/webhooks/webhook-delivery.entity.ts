import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One event for one subscription, recorded with the plant change (EventOutbox) and claimed by the
 * dispatcher. WebhooksRepository writes its statements out; this describes the table for the
 * schema test and readiness. Times are epoch milliseconds of the database's clock.
 */
@Entity({ name: 'webhook_deliveries' })
@Index('IDX_webhook_deliveries_due', ['state', 'nextAttemptAt'])
@Index('IDX_webhook_deliveries_subscription', ['subscriptionId', 'id'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'subscription_id', type: 'bigint' })
  subscriptionId: string;

  @Column({ name: 'event_type', type: 'varchar', length: 32 })
  eventType: string;

  /** The body's `data`, exact JSON. */
  @Column({ type: 'text', nullable: true })
  data: string | null;

  @Column({ name: 'occurred_at', type: 'bigint' })
  occurredAt: string;

  /** pending, delivered or failed. */
  @Column({ type: 'varchar', length: 16 })
  state: string;

  @Column({ type: 'int' })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'bigint' })
  nextAttemptAt: string;

  /** The instance's claim while it holds the delivery. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim: string | null;
}
