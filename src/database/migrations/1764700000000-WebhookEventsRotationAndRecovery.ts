import { MigrationInterface, QueryRunner } from 'typeorm';
import { boundLockWaits, online } from './online-ddl';

/**
 * What subscriptions need to run for years (docs/webhooks.md):
 *
 * - `webhook_events`: each event once, with the id every subscription's delivery of it carries as
 *   `webhook-id` (`evt_<id>`), for `GET /events`; deliveries refer to it by `event_id`.
 * - `webhook_deliveries.retry_from`: the attempts made before a delivery was resent or recovered, so
 *   its retry schedule starts again from there.
 * - `webhook_subscriptions.previous_secret` and its expiry: the secret a rotation replaced, which
 *   still signs until then; `recover_since`, `recover_after` and `recover_through`: a recovery the
 *   dispatchers work through a batch at a time.
 * - An index on deliveries by state, subscription and due time, for claims that serve every
 *   subscription with something due rather than the oldest rows whoever they belong to.
 *
 * An expand step: new nullable columns, a new table and new indexes. The previous release's
 * instances, serving beside this release during the upgrade, neither read nor write any of them,
 * and a row they write without them is what this release reads as a delivery recorded before it
 * (`event_id` NULL: `webhook-id` stays `msg_<id>`). Every step may be run again.
 */
export class WebhookEventsRotationAndRecovery1764700000000 implements MigrationInterface {
  name = 'WebhookEventsRotationAndRecovery1764700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!(await queryRunner.hasTable('webhook_events'))) {
      for (const statement of mysql ? MYSQL_EVENTS : SQLITE_EVENTS) await queryRunner.query(statement);
    }
    const subscriptions = await missing(queryRunner, 'webhook_subscriptions', subscriptionColumns(mysql), [RECOVERING]);
    const deliveries = await missing(queryRunner, 'webhook_deliveries', DELIVERY_COLUMNS, [CLAIMABLE, BY_EVENT]);
    if (mysql) {
      // One ALTER per table: each waits for its table's metadata lock once, a bounded time at a go.
      await boundLockWaits(queryRunner, async () => {
        for (const change of [subscriptions, deliveries]) {
          const clauses = [
            ...change.columns.map((column) => `ADD COLUMN ${column}`),
            ...change.indexes.map((index) => `ADD INDEX ${index.name} (${index.columns})`),
          ];
          if (clauses.length > 0) await online(queryRunner, `ALTER TABLE ${change.table} ${clauses.join(', ')}`);
        }
      });
      return;
    }
    for (const change of [subscriptions, deliveries]) {
      for (const column of change.columns) await queryRunner.query(`ALTER TABLE ${change.table} ADD COLUMN ${column}`);
      for (const index of change.indexes) {
        await queryRunner.query(`CREATE INDEX ${index.name} ON ${change.table} (${index.columns})`);
      }
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    const drop = async (table: string, columns: string[], indexes: Index[]) => {
      if (mysql) {
        const clauses = [
          ...indexes.map((index) => `DROP INDEX ${index.name}`),
          ...columns.map((column) => `DROP COLUMN ${column.split(' ')[0]}`),
        ];
        await boundLockWaits(queryRunner, () => online(queryRunner, `ALTER TABLE ${table} ${clauses.join(', ')}`));
        return;
      }
      for (const index of indexes) await queryRunner.query(`DROP INDEX ${index.name}`);
      for (const column of columns) await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN ${column.split(' ')[0]}`);
    };
    await drop('webhook_deliveries', DELIVERY_COLUMNS, [CLAIMABLE, BY_EVENT]);
    await drop('webhook_subscriptions', subscriptionColumns(mysql), [RECOVERING]);
    await queryRunner.query('DROP TABLE webhook_events');
  }
}

interface Index {
  name: string;
  columns: string;
}

const ID = 'CHARACTER SET ascii COLLATE ascii_bin';
const TEXT = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci';

/** Sealed text, as `secret` is: ASCII on MySQL/MariaDB. */
const subscriptionColumns = (mysql: boolean) => [
  `previous_secret varchar(255)${mysql ? ` ${ID}` : ''} NULL`,
  'previous_secret_expires_at bigint NULL',
  'recover_since bigint NULL',
  'recover_after bigint NULL',
  'recover_through bigint NULL',
];
const RECOVERING: Index = { name: 'IDX_webhook_subscriptions_recovering', columns: 'recover_through' };

const DELIVERY_COLUMNS = ['event_id bigint NULL', 'retry_from int NULL'];
const CLAIMABLE: Index = {
  name: 'IDX_webhook_deliveries_claimable',
  columns: 'state, subscription_id, next_attempt_at',
};
const BY_EVENT: Index = { name: 'IDX_webhook_deliveries_event', columns: 'event_id' };

/** The columns and indexes of `table` not there yet (a run cut short is run again). */
async function missing(
  queryRunner: QueryRunner,
  table: string,
  columns: string[],
  indexes: Index[],
): Promise<{ table: string; columns: string[]; indexes: Index[] }> {
  const existing = await queryRunner.getTable(table);
  const hasColumn = (name: string) => existing?.columns.some((column) => column.name === name) ?? false;
  const hasIndex = (name: string) => existing?.indices.some((index) => index.name === name) ?? false;
  return {
    table,
    columns: columns.filter((column) => !hasColumn(column.split(' ')[0])),
    indexes: indexes.filter((index) => !hasIndex(index.name)),
  };
}

const MYSQL_EVENTS = [
  `CREATE TABLE webhook_events (
    id bigint NOT NULL AUTO_INCREMENT,
    owner varchar(128) ${ID} NOT NULL,
    event_type varchar(32) ${ID} NOT NULL,
    data text ${TEXT} NOT NULL,
    occurred_at bigint NOT NULL,
    PRIMARY KEY (id),
    KEY IDX_webhook_events_owner (owner, id),
    KEY IDX_webhook_events_occurred (occurred_at)
  ) ENGINE=InnoDB`,
];

const SQLITE_EVENTS = [
  `CREATE TABLE webhook_events (
    id integer PRIMARY KEY AUTOINCREMENT,
    owner varchar(128) NOT NULL,
    event_type varchar(32) NOT NULL,
    data text NOT NULL,
    occurred_at bigint NOT NULL
  )`,
  'CREATE INDEX IDX_webhook_events_owner ON webhook_events (owner, id)',
  'CREATE INDEX IDX_webhook_events_occurred ON webhook_events (occurred_at)',
];
