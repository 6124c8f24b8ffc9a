import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64Transformer } from '../../common/int64';

/**
 * The version of the subscription feed (the SubscriptionFeed migration): one row, whose `version`
 * every new subscription raises in its own transaction and stores as its `feed_version`. The row's
 * lock orders those transactions, so versions commit in the order they are given: an instance that
 * has read every subscription up to version v has missed none below it (SubscribedOwners).
 */
@Entity({ name: 'webhook_subscription_feed' })
export class WebhookSubscriptionFeed {
  /** Always FEED_ROW: the table holds one row. */
  @PrimaryColumn({ type: 'int' })
  id: number;

  @Column({ type: 'bigint', transformer: int64Transformer })
  version: bigint;
}

/** The key of the feed's one row. */
export const FEED_ROW = 1;
