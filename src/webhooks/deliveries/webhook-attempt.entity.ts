import { int64Transformer } from '../../common/int64';
import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One attempt to deliver, as `GET /webhooks/{id}/deliveries` shows it. Its repositories'
 * statements are made from it (DeliveriesRepository), and the schema test and readiness check it.
 */
@Entity({ name: 'webhook_attempts' })
@Index('IDX_webhook_attempts_subscription', ['subscriptionId', 'id'])
export class WebhookAttempt {
  // No transformer: TypeORM takes none on a generated key. Statements read it with BigInt().
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'subscription_id', type: 'bigint', transformer: int64Transformer })
  subscriptionId: bigint;

  @Column({ name: 'delivery_id', type: 'bigint', transformer: int64Transformer })
  deliveryId: bigint;

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
