import { MigrationInterface, QueryRunner } from 'typeorm';
import { boundLockWaits, online } from './online-ddl';

/**
 * Webhook events are recorded by the service, in the plant's own transaction, from the event
 * declaration in src/webhooks/events.ts; a subscription keeps the set of events it wants in one
 * column (`events`, a JSON array of event types) and a delivery the `data` its receiver gets.
 *
 * An expand step: the previous release keeps working beside this one while instances are replaced
 * one at a time. Its columns stay and are still written (`on_created`/`on_deleted`,
 * `plant_id`/`plant_name`/`plant_tag`; see src/webhooks/previous-release.ts); a later release
 * removes them. Where the previous release's triggers exist, they are replaced, each in one
 * statement so no plant change falls between two triggers, by triggers that still record the
 * events of the previous release's sessions and stand aside for this release's, which say so with
 * the session variable @plant_store_records_events (src/database/data-source.ts sets it).
 *
 * A database created by this release never had the triggers (the Webhooks migration no longer
 * creates them), so it needs no privilege to create one (MySQL with binary logging asks for
 * log_bin_trust_function_creators).
 */
export class EventsRecordedByTheService1764300000000 implements MigrationInterface {
  name = 'EventsRecordedByTheService1764300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!mysql) {
      for (const statement of SQLITE_UP) await queryRunner.query(statement);
      return;
    }
    await boundLockWaits(queryRunner, async () => {
      // Each step may be run again: MySQL's DDL commits as it goes, so a migration cut short halfway
      // (a lost connection) is run again from the start by the next instance.
      if (!(await queryRunner.hasColumn('webhook_subscriptions', 'events'))) await online(queryRunner, MYSQL_UP[0]);
      await queryRunner.query(MYSQL_UP[1]);
      if (!(await queryRunner.hasColumn('webhook_deliveries', 'data'))) await online(queryRunner, MYSQL_UP[2]);
      if ((await triggers(queryRunner)).length > 0) await replaceTriggers(queryRunner, true);
    });
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!mysql) {
      for (const statement of SQLITE_DOWN) await queryRunner.query(statement);
      return;
    }
    await boundLockWaits(queryRunner, async () => {
      // The previous release records events only through its triggers.
      await replaceTriggers(queryRunner, false);
      await online(queryRunner, 'ALTER TABLE webhook_deliveries DROP COLUMN data');
      await online(queryRunner, 'ALTER TABLE webhook_subscriptions DROP COLUMN events');
    });
  }
}

const ID = 'CHARACTER SET ascii COLLATE ascii_bin';

/** The previous release's two columns, as the JSON array of event types the `events` column holds. */
const EVENTS_FROM_FLAGS =
  "CONCAT('[', CONCAT_WS(',', CASE WHEN on_created = 1 THEN '\"plant.created\"' END, " +
  "CASE WHEN on_deleted = 1 THEN '\"plant.deleted\"' END), ']')";

const MYSQL_UP = [
  `ALTER TABLE webhook_subscriptions ADD COLUMN events varchar(1024) ${ID} NULL`,
  `UPDATE webhook_subscriptions SET events = ${EVENTS_FROM_FLAGS} WHERE events IS NULL`,
  'ALTER TABLE webhook_deliveries ADD COLUMN data text CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL',
];

const SQLITE_UP = [
  // One process owns an SQLite file: no instance of the previous release can be running beside this one.
  'DROP TRIGGER IF EXISTS plants_webhook_created',
  'DROP TRIGGER IF EXISTS plants_webhook_deleted',
  'ALTER TABLE webhook_subscriptions ADD COLUMN events varchar(1024) NULL',
  `UPDATE webhook_subscriptions SET events = '[' || trim(` +
    `CASE WHEN on_created = 1 THEN '"plant.created"' ELSE '' END || ` +
    `CASE WHEN on_created = 1 AND on_deleted = 1 THEN ',' ELSE '' END || ` +
    `CASE WHEN on_deleted = 1 THEN '"plant.deleted"' ELSE '' END) || ']' WHERE events IS NULL`,
  'ALTER TABLE webhook_deliveries ADD COLUMN data text NULL',
];

const SQLITE_NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/** Back to the previous release's schema, triggers included (it records events only through them). */
const SQLITE_DOWN = [
  'ALTER TABLE webhook_deliveries DROP COLUMN data',
  'ALTER TABLE webhook_subscriptions DROP COLUMN events',
  `CREATE TRIGGER plants_webhook_created AFTER INSERT ON plants FOR EACH ROW BEGIN
    INSERT INTO webhook_deliveries
      (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, state, attempts, next_attempt_at)
    SELECT s.id, 'plant.created', NEW.id, NEW.name, NEW.tag, ${SQLITE_NOW_MS}, 'pending', 0, ${SQLITE_NOW_MS}
    FROM webhook_subscriptions s
    WHERE s.owner = NEW.owner AND s.on_created = 1 AND s.disabled_at IS NULL;
  END`,
  `CREATE TRIGGER plants_webhook_deleted AFTER DELETE ON plants FOR EACH ROW BEGIN
    INSERT INTO webhook_deliveries
      (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, state, attempts, next_attempt_at)
    SELECT s.id, 'plant.deleted', OLD.id, NULL, NULL, ${SQLITE_NOW_MS}, 'pending', 0, ${SQLITE_NOW_MS}
    FROM webhook_subscriptions s
    WHERE s.owner = OLD.owner AND s.on_deleted = 1 AND s.disabled_at IS NULL;
  END`,
];

async function triggers(queryRunner: QueryRunner): Promise<string[]> {
  const rows = (await queryRunner.query(
    "SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'plants\\_webhook\\_%'",
  )) as { name: string }[];
  return rows.map((row) => row.name);
}

/**
 * Puts the previous release's triggers in place, recording for every session (`onlyForPrevious`
 * false) or only for sessions that do not record events themselves. MariaDB replaces a trigger in
 * one statement; MySQL has no CREATE OR REPLACE TRIGGER, so the tables stay locked while its two
 * statements run.
 */
async function replaceTriggers(queryRunner: QueryRunner, onlyForPrevious: boolean): Promise<void> {
  const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as { version: string }[];
  const mariadb = /mariadb/i.test(version);
  // MariaDB (and other servers built for Galera) know wsrep_sync_wait; MySQL does not.
  const statements = (['created', 'deleted'] as const).map((event) => trigger(event, mariadb, onlyForPrevious));
  if (mariadb) {
    for (const statement of statements) await online(queryRunner, `CREATE OR REPLACE ${statement}`);
    return;
  }
  await online(queryRunner, 'LOCK TABLES plants WRITE, webhook_subscriptions READ, webhook_deliveries WRITE');
  try {
    for (const event of ['created', 'deleted'])
      await queryRunner.query(`DROP TRIGGER IF EXISTS plants_webhook_${event}`);
    for (const statement of statements) await queryRunner.query(`CREATE ${statement}`);
  } finally {
    await queryRunner.query('UNLOCK TABLES');
  }
}

const NOW_MS = 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)';

/**
 * The previous release's trigger for `event`, recording only for the previous release's sessions
 * when `onlyForPrevious`.
 *
 * On a Galera node sessions wait for causality (wsrep_sync_wait, src/database/galera.ts) before
 * each statement. The server would also wait before the trigger's own INSERT ... SELECT, halfway
 * through the plant's statement and holding its row lock; if a write of another node that needs
 * that lock is being applied meanwhile, the wait and the applier wait for each other until the
 * statement times out. The statement has waited once already, before it took any lock, so the
 * trigger switches the wait off for its own statement and back on after it.
 */
function trigger(event: 'created' | 'deleted', galeraCapable: boolean, onlyForPrevious: boolean): string {
  const row = event === 'created' ? 'NEW' : 'OLD';
  const insert = `INSERT INTO webhook_deliveries
      (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, state, attempts, next_attempt_at)
    SELECT s.id, 'plant.${event}', ${row}.id, ${event === 'created' ? 'NEW.name, NEW.tag' : 'NULL, NULL'}, ${NOW_MS}, 'pending', 0, ${NOW_MS}
    FROM webhook_subscriptions s
    WHERE s.owner = ${row}.owner AND s.on_${event} = 1 AND s.disabled_at IS NULL`;
  const body = galeraCapable
    ? `BEGIN
    DECLARE causal INT DEFAULT @@session.wsrep_sync_wait;
    SET @@session.wsrep_sync_wait = 0;
    ${insert};
    SET @@session.wsrep_sync_wait = causal;
  END`
    : insert;
  const guarded = onlyForPrevious
    ? `BEGIN
  IF @plant_store_records_events IS NULL THEN
    ${body};
  END IF;
END`
    : body;
  return `TRIGGER plants_webhook_${event} AFTER ${event === 'created' ? 'INSERT' : 'DELETE'} ON plants FOR EACH ROW\n${guarded}`;
}
