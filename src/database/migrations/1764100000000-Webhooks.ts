import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook subscriptions, their deliveries and the attempts made.
 *
 * Databases created by the first release with webhooks also got two triggers on `plants` here,
 * which recorded the deliveries; the service now records them itself (see the
 * EventsRecordedByTheService migration, which deals with those triggers where they exist), so a
 * new database is created without them and without the privilege they need.
 *
 * Times are epoch milliseconds of the database's clock, so every instance schedules and claims
 * against the same clock however far apart their own clocks are.
 */
export class Webhooks1764100000000 implements MigrationInterface {
  name = 'Webhooks1764100000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!mysql) {
      for (const statement of SQLITE_UP) await queryRunner.query(statement);
      return;
    }
    for (const statement of MYSQL_TABLES) await queryRunner.query(statement);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER IF EXISTS plants_webhook_deleted');
    await queryRunner.query('DROP TRIGGER IF EXISTS plants_webhook_created');
    await queryRunner.query('DROP TABLE webhook_attempts');
    await queryRunner.query('DROP TABLE webhook_deliveries');
    await queryRunner.query('DROP TABLE webhook_subscriptions');
  }
}

const ID = 'CHARACTER SET ascii COLLATE ascii_bin';
const TEXT = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci';

const MYSQL_TABLES = [
  `CREATE TABLE webhook_subscriptions (
    id bigint NOT NULL,
    owner varchar(128) ${ID} NOT NULL,
    url varchar(2048) ${TEXT} NOT NULL,
    on_created tinyint NOT NULL,
    on_deleted tinyint NOT NULL,
    description varchar(255) ${TEXT} NULL,
    secret varchar(255) ${ID} NOT NULL,
    created_at bigint NOT NULL,
    failing_since bigint NULL,
    disabled_at bigint NULL,
    disabled_reason varchar(255) ${TEXT} NULL,
    PRIMARY KEY (id),
    KEY IDX_webhook_subscriptions_owner (owner)
  ) ENGINE=InnoDB`,
  `CREATE TABLE webhook_deliveries (
    id bigint NOT NULL AUTO_INCREMENT,
    subscription_id bigint NOT NULL,
    event_type varchar(32) ${ID} NOT NULL,
    plant_id bigint NOT NULL,
    plant_name varchar(255) ${TEXT} NULL,
    plant_tag varchar(64) ${TEXT} NULL,
    occurred_at bigint NOT NULL,
    state varchar(16) ${ID} NOT NULL,
    attempts int NOT NULL,
    next_attempt_at bigint NOT NULL,
    claim varchar(36) ${ID} NULL,
    PRIMARY KEY (id),
    KEY IDX_webhook_deliveries_due (state, next_attempt_at),
    KEY IDX_webhook_deliveries_subscription (subscription_id, id)
  ) ENGINE=InnoDB`,
  `CREATE TABLE webhook_attempts (
    id bigint NOT NULL AUTO_INCREMENT,
    subscription_id bigint NOT NULL,
    delivery_id bigint NOT NULL,
    event_type varchar(32) ${ID} NOT NULL,
    attempt int NOT NULL,
    status_code int NULL,
    error varchar(255) ${TEXT} NULL,
    attempted_at bigint NOT NULL,
    duration_ms int NOT NULL,
    PRIMARY KEY (id),
    KEY IDX_webhook_attempts_subscription (subscription_id, id)
  ) ENGINE=InnoDB`,
];

const SQLITE_UP = [
  `CREATE TABLE webhook_subscriptions (
    id bigint NOT NULL PRIMARY KEY,
    owner varchar(128) NOT NULL,
    url varchar(2048) NOT NULL,
    on_created tinyint NOT NULL,
    on_deleted tinyint NOT NULL,
    description varchar(255) NULL,
    secret varchar(255) NOT NULL,
    created_at bigint NOT NULL,
    failing_since bigint NULL,
    disabled_at bigint NULL,
    disabled_reason varchar(255) NULL
  )`,
  'CREATE INDEX IDX_webhook_subscriptions_owner ON webhook_subscriptions (owner)',
  `CREATE TABLE webhook_deliveries (
    id integer PRIMARY KEY AUTOINCREMENT,
    subscription_id bigint NOT NULL,
    event_type varchar(32) NOT NULL,
    plant_id bigint NOT NULL,
    plant_name varchar(255) NULL,
    plant_tag varchar(64) NULL,
    occurred_at bigint NOT NULL,
    state varchar(16) NOT NULL,
    attempts int NOT NULL,
    next_attempt_at bigint NOT NULL,
    claim varchar(36) NULL
  )`,
  'CREATE INDEX IDX_webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at)',
  'CREATE INDEX IDX_webhook_deliveries_subscription ON webhook_deliveries (subscription_id, id)',
  `CREATE TABLE webhook_attempts (
    id integer PRIMARY KEY AUTOINCREMENT,
    subscription_id bigint NOT NULL,
    delivery_id bigint NOT NULL,
    event_type varchar(32) NOT NULL,
    attempt int NOT NULL,
    status_code int NULL,
    error varchar(255) NULL,
    attempted_at bigint NOT NULL,
    duration_ms int NOT NULL
  )`,
  'CREATE INDEX IDX_webhook_attempts_subscription ON webhook_attempts (subscription_id, id)',
];
