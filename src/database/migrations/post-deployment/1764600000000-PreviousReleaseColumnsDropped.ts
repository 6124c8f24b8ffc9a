import { MigrationInterface, QueryRunner } from 'typeorm';
import { fillWhatThisReleaseReads } from '../1764500000000-PreviousReleaseColumnsUnwritten';
import { changeLargeTable } from '../online-ddl';

/**
 * The contract step of EventsRecordedByTheService and SubscriptionIdsSafeInJavaScript, a
 * post-deployment migration: run once every instance runs the release that stopped writing the
 * previous release's columns (PreviousReleaseColumnsUnwritten), since an instance of the previous
 * release still writes them and would fail without them. It drops the flag columns of
 * `webhook_subscriptions` and the plant columns of `webhook_deliveries`, after filling anything a
 * row could still lack (nothing, unless a previous release's instance served after the expand step).
 */
export class PreviousReleaseColumnsDropped1764600000000 implements MigrationInterface {
  name = 'PreviousReleaseColumnsDropped1764600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await fillWhatThisReleaseReads(queryRunner);
    await change(queryRunner, UP);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await change(queryRunner, DOWN);
    // The previous release reads the flags only where `events` is missing, and writes them itself.
    await queryRunner.query(
      `UPDATE webhook_subscriptions SET on_created = CASE WHEN events LIKE '%"plant.created"%' THEN 1 ELSE 0 END, ` +
        `on_deleted = CASE WHEN events LIKE '%"plant.deleted"%' THEN 1 ELSE 0 END`,
    );
  }
}

interface TableChange {
  table: string;
  /** What each column becomes, as a clause of MySQL's ALTER TABLE and of SQLite's. */
  clauses: string[];
}

const UP: TableChange[] = [
  { table: 'webhook_subscriptions', clauses: ['DROP COLUMN on_created', 'DROP COLUMN on_deleted'] },
  {
    table: 'webhook_deliveries',
    clauses: ['DROP COLUMN plant_id', 'DROP COLUMN plant_name', 'DROP COLUMN plant_tag'],
  },
];

const DOWN: TableChange[] = [
  {
    table: 'webhook_subscriptions',
    clauses: ['ADD COLUMN on_created tinyint NOT NULL DEFAULT 0', 'ADD COLUMN on_deleted tinyint NOT NULL DEFAULT 0'],
  },
  {
    table: 'webhook_deliveries',
    clauses: [
      'ADD COLUMN plant_id bigint NOT NULL DEFAULT 0',
      'ADD COLUMN plant_name varchar(255) NULL',
      'ADD COLUMN plant_tag varchar(64) NULL',
    ],
  },
];

/**
 * One ALTER TABLE per table on MySQL/MariaDB (one change of each table in use), as a large table's
 * change: deliveries pile up, and on a Galera cluster a change that held the cluster's writes for
 * as long as it took would stop the service. SQLite takes one clause at a time.
 */
async function change(queryRunner: QueryRunner, changes: TableChange[]): Promise<void> {
  const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
  for (const { table, clauses } of changes) {
    if (mysql) await changeLargeTable(queryRunner, table, clauses.join(', '));
    else for (const clause of clauses) await queryRunner.query(`ALTER TABLE ${table} ${clause}`);
  }
}
