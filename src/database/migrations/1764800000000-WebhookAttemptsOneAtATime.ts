import { MigrationInterface, QueryRunner } from 'typeorm';
import { boundLockWaits, changeLargeTable, online } from './online-ddl';

/**
 * What keeps a delivery's attempts, and a subscription's tests, one at a time across instances
 * (docs/webhooks.md):
 *
 * - `webhook_deliveries.resend_after_attempt`: 1 when a resend came while an attempt of the
 *   delivery was under way (its claim's lease running), whichever instance makes it: the delivery
 *   is sent once more after that attempt instead of beside it.
 * - `webhook_subscriptions.testing_until`: while a test of the subscription runs, when its lease
 *   ends (epoch milliseconds of the database's clock); another test is refused until then.
 *
 * An expand step: a column with a default and a nullable one. The previous release's instances,
 * serving beside this release during the upgrade, neither read nor write them, and a row they
 * write without them is valid (no resend waiting, no test running). Every step may be run again.
 */
export class WebhookAttemptsOneAtATime1764800000000 implements MigrationInterface {
  name = 'WebhookAttemptsOneAtATime1764800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!(await queryRunner.hasColumn('webhook_deliveries', 'resend_after_attempt'))) {
      // Deliveries pile up: a large table's change (on MariaDB a column with a default is added
      // in the table's definition alone).
      if (mysql) await changeLargeTable(queryRunner, 'webhook_deliveries', `ADD COLUMN ${RESEND_AFTER_ATTEMPT}`);
      else await queryRunner.query(`ALTER TABLE webhook_deliveries ADD COLUMN ${RESEND_AFTER_ATTEMPT}`);
    }
    if (!(await queryRunner.hasColumn('webhook_subscriptions', 'testing_until'))) {
      const statement = `ALTER TABLE webhook_subscriptions ADD COLUMN ${TESTING_UNTIL}`;
      if (mysql) await boundLockWaits(queryRunner, () => online(queryRunner, statement));
      else await queryRunner.query(statement);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (mysql) {
      await boundLockWaits(queryRunner, () =>
        online(queryRunner, 'ALTER TABLE webhook_subscriptions DROP COLUMN testing_until'),
      );
      await changeLargeTable(queryRunner, 'webhook_deliveries', 'DROP COLUMN resend_after_attempt');
      return;
    }
    await queryRunner.query('ALTER TABLE webhook_subscriptions DROP COLUMN testing_until');
    await queryRunner.query('ALTER TABLE webhook_deliveries DROP COLUMN resend_after_attempt');
  }
}

const RESEND_AFTER_ATTEMPT = 'resend_after_attempt int NOT NULL DEFAULT 0';
const TESTING_UNTIL = 'testing_until bigint NULL';
