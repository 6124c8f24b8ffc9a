import { randomBytes } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { boundLockWaits, codeOf, online } from './online-ddl';

/**
 * Webhook subscriptions get the id the API shows them by, `public_id`, within 2^53 - 1
 * (JavaScript's Number.MAX_SAFE_INTEGER), which every JSON parser reads exactly. The previous
 * release showed the row's key, a random 63-bit `id`, which JSON.parse rounds, so a JavaScript
 * client's DELETE /webhooks/{id} named a subscription that did not exist.
 *
 * `id` stays the row's key, which deliveries and attempts refer to, and is never changed: a
 * subscription whose `id` is already within the bound keeps it as its public id, any other gets a
 * new random one (the API still finds it by its old id, which clients may hold). A subscription
 * created from now on has one value in both columns.
 *
 * An expand step: the previous release's instances serve while this runs and afterwards, and know
 * subscriptions by `id` as before; nothing they read or write changes. The subscriptions they
 * create during the upgrade have no `public_id`; this release gives them one as it finds them
 * (src/webhooks/previous-release.ts). Every step may be run again.
 */
export class SubscriptionIdsSafeInJavaScript1764400000000 implements MigrationInterface {
  name = 'SubscriptionIdsSafeInJavaScript1764400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    const change = (statement: string) =>
      mysql ? boundLockWaits(queryRunner, () => online(queryRunner, statement)) : queryRunner.query(statement);
    if (!(await queryRunner.hasColumn('webhook_subscriptions', 'public_id'))) {
      await change('ALTER TABLE webhook_subscriptions ADD COLUMN public_id bigint NULL');
    }
    const table = await queryRunner.getTable('webhook_subscriptions');
    if (!table?.indices.some((index) => index.name === PUBLIC_ID_INDEX)) {
      await change(
        mysql
          ? `ALTER TABLE webhook_subscriptions ADD UNIQUE INDEX ${PUBLIC_ID_INDEX} (public_id)`
          : `CREATE UNIQUE INDEX ${PUBLIC_ID_INDEX} ON webhook_subscriptions (public_id)`,
      );
    }
    // Ids a client already reads exactly stay what they are; no random id is given out before them.
    await queryRunner.query(
      `UPDATE webhook_subscriptions SET public_id = id WHERE public_id IS NULL AND id BETWEEN 1 AND ${MAX_SAFE_ID}`,
    );
    const rest = (await queryRunner.query(
      'SELECT id FROM webhook_subscriptions WHERE public_id IS NULL ORDER BY id',
    )) as { id: unknown }[];
    for (const { id } of rest) {
      for (let attempt = 1; ; attempt++) {
        try {
          await queryRunner.query('UPDATE webhook_subscriptions SET public_id = ? WHERE id = ? AND public_id IS NULL', [
            newId(),
            BigInt(String(id)),
          ]);
          break;
        } catch (error) {
          // Another subscription has that id (one chance in 2^53 for each): draw another.
          if (!isUniqueViolation(error) || attempt >= 5) throw error;
        }
      }
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    const change = (statement: string) =>
      mysql ? boundLockWaits(queryRunner, () => online(queryRunner, statement)) : queryRunner.query(statement);
    await change(
      mysql ? `ALTER TABLE webhook_subscriptions DROP INDEX ${PUBLIC_ID_INDEX}` : `DROP INDEX ${PUBLIC_ID_INDEX}`,
    );
    await change('ALTER TABLE webhook_subscriptions DROP COLUMN public_id');
  }
}

const PUBLIC_ID_INDEX = 'IDX_webhook_subscriptions_public_id';
const MAX_SAFE_ID = '9007199254740991';

/** A random id from 1 to 2^53 - 1. */
function newId(): bigint {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE() >> 11n;
    if (id !== 0n) return id;
  }
}

const isUniqueViolation = (error: unknown): boolean =>
  ['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE'].includes(codeOf(error) ?? '');
