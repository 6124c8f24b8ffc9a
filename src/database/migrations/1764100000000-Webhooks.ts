import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook subscriptions, their deliveries and the attempts made, and the triggers that record a
 * delivery for every subscription a plant change concerns. The triggers make the event part of the
 * statement that changes the plant: it commits or rolls back with it, whichever instance ran it, and
 * a create or delete stays one statement from the service whether or not anyone subscribed.
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
    // MariaDB (and other servers built for Galera) know wsrep_sync_wait; MySQL does not.
    const galeraCapable = ((await queryRunner.query("SHOW VARIABLES LIKE 'wsrep_sync_wait'")) as unknown[]).length > 0;
    for (const event of ['created', 'deleted'] as const) await queryRunner.query(mysqlTrigger(event, galeraCapable));
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER IF EXISTS plants_webhook_deleted');
    await queryRunner.query('DROP TRIGGER IF EXISTS plants_webhook_created');
    await queryRunner.query('DROP TABLE webhook_attempts');
    await queryRunner.query('DROP TABLE webhook_deliveries');
    await queryRunner.query('DROP TABLE webhook_subscriptions');
  }
}

/** Epoch milliseconds now, on each database's clock. */
const DATABASE_NOW_MS = {
  mysql: 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)',
  sqlite: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
} as const;

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

/**
 * The trigger recording `event` for every subscription of the plant's owner.
 *
 * On a Galera node the service's sessions wait for causality (wsrep_sync_wait, src/database/galera.ts)
 * before each statement. The server would also wait before the trigger's own INSERT ... SELECT,
 * halfway through the plant's statement and holding its row lock; if a write of another node that
 * needs that lock is being applied meanwhile, the wait and the applier wait for each other until the
 * statement times out. The statement has waited once already, before it took any lock, so the
 * trigger switches the wait off for its own statement and back on after it; if it fails halfway,
 * the service sets the session's wait again before the connection's next statement.
 */
function mysqlTrigger(event: 'created' | 'deleted', galeraCapable: boolean): string {
  const row = event === 'created' ? 'NEW' : 'OLD';
  const insert = `INSERT INTO webhook_deliveries
      (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, state, attempts, next_attempt_at)
    SELECT s.id, 'plant.${event}', ${row}.id, ${event === 'created' ? 'NEW.name, NEW.tag' : 'NULL, NULL'}, ${DATABASE_NOW_MS.mysql}, 'pending', 0, ${DATABASE_NOW_MS.mysql}
    FROM webhook_subscriptions s
    WHERE s.owner = ${row}.owner AND s.on_${event} = 1 AND s.disabled_at IS NULL`;
  const timing = `AFTER ${event === 'created' ? 'INSERT' : 'DELETE'} ON plants FOR EACH ROW`;
  if (!galeraCapable) return `CREATE TRIGGER plants_webhook_${event} ${timing}\n    ${insert}`;
  return `CREATE TRIGGER plants_webhook_${event} ${timing} BEGIN
    DECLARE causal INT DEFAULT @@session.wsrep_sync_wait;
    SET @@session.wsrep_sync_wait = 0;
    ${insert};
    SET @@session.wsrep_sync_wait = causal;
  END`;
}

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
  `CREATE TRIGGER plants_webhook_created AFTER INSERT ON plants FOR EACH ROW BEGIN
    INSERT INTO webhook_deliveries
      (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, state, attempts, next_attempt_at)
    SELECT s.id, 'plant.created', NEW.id, NEW.name, NEW.tag, ${DATABASE_NOW_MS.sqlite}, 'pending', 0, ${DATABASE_NOW_MS.sqlite}
    FROM webhook_subscriptions s
    WHERE s.owner = NEW.owner AND s.on_created = 1 AND s.disabled_at IS NULL;
  END`,
  `CREATE TRIGGER plants_webhook_deleted AFTER DELETE ON plants FOR EACH ROW BEGIN
    INSERT INTO webhook_deliveries
      (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, state, attempts, next_attempt_at)
    SELECT s.id, 'plant.deleted', OLD.id, NULL, NULL, ${DATABASE_NOW_MS.sqlite}, 'pending', 0, ${DATABASE_NOW_MS.sqlite}
    FROM webhook_subscriptions s
    WHERE s.owner = OLD.owner AND s.on_deleted = 1 AND s.disabled_at IS NULL;
  END`,
];
