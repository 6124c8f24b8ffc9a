import { MigrationInterface, QueryRunner } from 'typeorm';
import { boundLockWaits, online } from './online-ddl';

/**
 * The subscription feed, through which every instance learns which owners have a webhook
 * subscription (docs/webhooks.md, "How an event is recorded"):
 *
 * - `webhook_subscription_feed`: one row (id 1), whose `version` each new subscription raises in its
 *   own transaction;
 * - `webhook_subscriptions.feed_version`: the version a subscription was made at, indexed, for the
 *   instances' poll of what is newer than what they have read.
 *
 * An expand step: a new table and a nullable column, set to 0 for the subscriptions there are. The
 * previous release's instances, serving beside this release during the upgrade, neither read nor
 * write them; a subscription one of them makes has no version, which every poll reads until the
 * post-deployment step SubscriptionFeedFilled gives it one. Every step may be run again.
 */
export class SubscriptionFeed1764900000000 implements MigrationInterface {
  name = 'SubscriptionFeed1764900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!(await queryRunner.hasTable('webhook_subscription_feed'))) {
      await queryRunner.query(
        mysql
          ? 'CREATE TABLE webhook_subscription_feed (id int NOT NULL, version bigint NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB'
          : 'CREATE TABLE webhook_subscription_feed (id integer PRIMARY KEY NOT NULL, version bigint NOT NULL)',
      );
    }
    await queryRunner.query(
      mysql
        ? 'INSERT IGNORE INTO webhook_subscription_feed (id, version) VALUES (1, 0)'
        : 'INSERT OR IGNORE INTO webhook_subscription_feed (id, version) VALUES (1, 0)',
    );
    if (!(await queryRunner.hasColumn('webhook_subscriptions', 'feed_version'))) {
      if (mysql) {
        await boundLockWaits(queryRunner, () =>
          online(
            queryRunner,
            `ALTER TABLE webhook_subscriptions ADD COLUMN ${FEED_VERSION}, ADD INDEX ${INDEX} (feed_version)`,
          ),
        );
      } else {
        await queryRunner.query(`ALTER TABLE webhook_subscriptions ADD COLUMN ${FEED_VERSION}`);
        await queryRunner.query(`CREATE INDEX ${INDEX} ON webhook_subscriptions (feed_version)`);
      }
    }
    await fillFeedVersions(queryRunner);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (mysql) {
      await boundLockWaits(queryRunner, () =>
        online(queryRunner, `ALTER TABLE webhook_subscriptions DROP INDEX ${INDEX}, DROP COLUMN feed_version`),
      );
    } else {
      await queryRunner.query(`DROP INDEX ${INDEX}`);
      await queryRunner.query('ALTER TABLE webhook_subscriptions DROP COLUMN feed_version');
    }
    await queryRunner.query('DROP TABLE webhook_subscription_feed');
  }
}

/**
 * Version 0 for the subscriptions without one: those made before the feed, or by the previous
 * release during the upgrade. Every instance reads them at start-up; one already running has read
 * them on every poll until now, so none is missed.
 */
export async function fillFeedVersions(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query('UPDATE webhook_subscriptions SET feed_version = 0 WHERE feed_version IS NULL');
}

const FEED_VERSION = 'feed_version bigint NULL';
const INDEX = 'IDX_webhook_subscriptions_feed_version';
