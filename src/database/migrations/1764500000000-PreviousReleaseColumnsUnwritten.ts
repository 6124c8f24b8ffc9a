import { MigrationInterface, QueryRunner } from 'typeorm';
import { boundLockWaits, online } from './online-ddl';
import { SubscriptionIdsSafeInJavaScript1764400000000 } from './1764400000000-SubscriptionIdsSafeInJavaScript';

/**
 * The expand step before the contract of EventsRecordedByTheService and SubscriptionIdsSafeInJavaScript:
 * this release reads only `events`, `data` and `public_id`, and writes none of the previous
 * release's columns (`on_created`/`on_deleted`, `plant_id`/`plant_name`/`plant_tag`), which the
 * post-deployment migration PreviousReleaseColumnsDropped removes once no instance of the previous
 * release serves.
 *
 * - The previous release's columns get defaults, so a row this release inserts without them is
 *   valid; the previous release reads them only where `events` or `data` is missing, which this
 *   release never leaves missing. Setting a default changes the table's definition only.
 * - Every row gets what this release reads: `events` from the flags, `data` from the plant columns
 *   (rows the triggers of the release before the previous one recorded), a public id (subscriptions
 *   that release made during the previous upgrade). The previous release writes all three itself.
 * - The triggers of the release before the previous one go: this release's sessions no longer tell
 *   them to stand aside, and the only sessions they recorded for, that release's, cannot be running
 *   (upgrades go one release at a time).
 *
 * SQLite is one file for one process, which runs the post-deployment migrations at start-up too
 * (src/database/migrations-runner.ts): no default is needed there, and its triggers went with
 * EventsRecordedByTheService. Every step may be run again.
 */
export class PreviousReleaseColumnsUnwritten1764500000000 implements MigrationInterface {
  name = 'PreviousReleaseColumnsUnwritten1764500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (mysql) {
      await boundLockWaits(queryRunner, async () => {
        for (const event of ['created', 'deleted']) {
          await online(queryRunner, `DROP TRIGGER IF EXISTS plants_webhook_${event}`);
        }
        await online(
          queryRunner,
          'ALTER TABLE webhook_subscriptions ALTER COLUMN on_created SET DEFAULT 0, ALTER COLUMN on_deleted SET DEFAULT 0',
        );
        await online(queryRunner, 'ALTER TABLE webhook_deliveries ALTER COLUMN plant_id SET DEFAULT 0');
      });
    }
    await fillWhatThisReleaseReads(queryRunner);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    if (!mysql) return;
    // The rows keep what was filled in: the previous release reads it where it is there.
    await boundLockWaits(queryRunner, async () => {
      await online(
        queryRunner,
        'ALTER TABLE webhook_subscriptions ALTER COLUMN on_created DROP DEFAULT, ALTER COLUMN on_deleted DROP DEFAULT',
      );
      await online(queryRunner, 'ALTER TABLE webhook_deliveries ALTER COLUMN plant_id DROP DEFAULT');
    });
  }
}

const BATCH = 500;

/**
 * `events`, `data` and `public_id` for every row that has only the previous releases' columns,
 * computed here from those columns as the releases that wrote them did (src/webhooks/events.ts of
 * this release sends the same `data`). Run again by PreviousReleaseColumnsDropped before it drops
 * the columns.
 */
export async function fillWhatThisReleaseReads(queryRunner: QueryRunner): Promise<void> {
  for (;;) {
    const rows = (await queryRunner.query(
      `SELECT id, on_created, on_deleted FROM webhook_subscriptions WHERE events IS NULL ORDER BY id LIMIT ${BATCH}`,
    )) as { id: unknown; on_created: unknown; on_deleted: unknown }[];
    for (const row of rows) {
      const events = [
        ...(Number(row.on_created) === 1 ? ['plant.created'] : []),
        ...(Number(row.on_deleted) === 1 ? ['plant.deleted'] : []),
      ];
      await queryRunner.query('UPDATE webhook_subscriptions SET events = ? WHERE id = ? AND events IS NULL', [
        JSON.stringify(events),
        BigInt(String(row.id)),
      ]);
    }
    if (rows.length < BATCH) break;
  }
  for (;;) {
    const rows = (await queryRunner.query(
      'SELECT id, event_type, plant_id, plant_name, plant_tag FROM webhook_deliveries WHERE data IS NULL ' +
        `ORDER BY id LIMIT ${BATCH}`,
    )) as DeliveryColumns[];
    for (const row of rows) {
      await queryRunner.query('UPDATE webhook_deliveries SET data = ? WHERE id = ? AND data IS NULL', [
        dataOf(row),
        BigInt(String(row.id)),
      ]);
    }
    if (rows.length < BATCH) break;
  }
  // Its steps each find what is still missing: a public id for every subscription without one.
  await new SubscriptionIdsSafeInJavaScript1764400000000().up(queryRunner);
}

interface DeliveryColumns {
  id: unknown;
  event_type: string;
  plant_id: unknown;
  plant_name: string | null;
  plant_tag: string | null;
}

/** A delivery's `data` as the service sends it: `{"id":…,"name":…,"tag":…}` for a creation, `{"id":…}` else. */
function dataOf(row: DeliveryColumns): string {
  const id = String(row.plant_id);
  if (row.event_type !== 'plant.created') return `{"id":${id}}`;
  const tag = row.plant_tag === null ? '' : `,"tag":${JSON.stringify(row.plant_tag)}`;
  return `{"id":${id},"name":${JSON.stringify(row.plant_name)}${tag}}`;
}
