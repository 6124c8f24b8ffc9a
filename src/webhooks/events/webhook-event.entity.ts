import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One webhook event of a user, recorded with the plant change when a subscription of the user wanted
 * it: what `GET /events` lists, and what every delivery of it carries (`webhook-id` `evt_<id>`).
 * Its repositories' statements are made from it (EventsRepository), and the schema test and
 * readiness check it. Times are epoch milliseconds of the database's clock.
 */
@Entity({ name: 'webhook_events' })
@Index('IDX_webhook_events_owner', ['owner', 'id'])
export class WebhookEventRecord {
  // No transformer: TypeORM takes none on a generated key. Statements read it with BigInt().
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'varchar', length: 128 })
  owner: string;

  @Column({ name: 'event_type', type: 'varchar', length: 32 })
  eventType: string;

  /** The body's `data`, exact JSON. */
  @Column({ type: 'text' })
  data: string;

  @Index('IDX_webhook_events_occurred')
  @Column({ name: 'occurred_at', type: 'bigint' })
  occurredAt: string;
}
