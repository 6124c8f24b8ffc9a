import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One attempt to deliver, as `GET /webhooks/{id}/deliveries` shows it. WebhooksRepository writes its
 * statements out; this describes the table for the schema test and readiness.
 */
@Entity({ name: 'webhook_attempts' })
@Index('IDX_webhook_attempts_subscription', ['subscriptionId', 'id'])
export class WebhookAttempt {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'subscription_id', type: 'bigint' })
  subscriptionId: string;

  @Column({ name: 'delivery_id', type: 'bigint' })
  deliveryId: string;

  @Column({ name: 'event_type', type: 'varchar', length: 32 })
  eventType: string;

  @Column({ type: 'int' })
  attempt: number;

  @Column({ name: 'status_code', type: 'int', nullable: true })
  statusCode: number | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  error: string | null;

  @Column({ name: 'attempted_at', type: 'bigint' })
  attemptedAt: string;

  @Column({ name: 'duration_ms', type: 'int' })
  durationMs: number;
}
