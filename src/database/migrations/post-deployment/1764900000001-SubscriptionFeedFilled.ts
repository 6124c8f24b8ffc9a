import { MigrationInterface, QueryRunner } from 'typeorm';
import { fillFeedVersions } from '../1764900000000-SubscriptionFeed';

/**
 * The contract step of SubscriptionFeed, a post-deployment migration: once every instance runs the
 * release with the feed, the subscriptions the previous release made during the upgrade (without a
 * feed version, read by every poll until now) get version 0, and the polls read only what is new.
 */
export class SubscriptionFeedFilled1764900000001 implements MigrationInterface {
  name = 'SubscriptionFeedFilled1764900000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await fillFeedVersions(queryRunner);
  }

  /** Nothing to undo: a version of 0 is what the expand step gives the subscriptions it finds. */
  public async down(): Promise<void> {}
}
