import { DataSource } from 'typeorm';

/** How long an instance waits for another one to finish migrating before giving up. */
export const MIGRATION_LOCK_TIMEOUT_SECONDS = 120;

/**
 * Runs pending migrations once, however many instances start at the same moment. On MySQL the
 * instances queue on a named lock (GET_LOCK, per database); the first migrates, the others then
 * find nothing pending. MySQL's DDL is not transactional, so without the lock two instances could
 * both start the same CREATE TABLE. SQLite is one file for one process; its migrations run in one
 * transaction.
 */
export async function runPendingMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'mysql' && dataSource.options.type !== 'mariadb') {
    await dataSource.runMigrations({ transaction: 'all' });
    return;
  }
  const lockHolder = dataSource.createQueryRunner();
  await lockHolder.connect();
  const lockName = "LEFT(CONCAT('plantstore-migrations:', DATABASE()), 64)";
  try {
    const [row] = (await lockHolder.query(`SELECT GET_LOCK(${lockName}, ?) AS acquired`, [
      MIGRATION_LOCK_TIMEOUT_SECONDS,
    ])) as { acquired: unknown }[];
    if (Number(row?.acquired) !== 1) {
      throw new Error(`Another instance held the migration lock for over ${MIGRATION_LOCK_TIMEOUT_SECONDS} s`);
    }
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await lockHolder.query(`SELECT RELEASE_LOCK(${lockName})`);
    }
  } finally {
    await lockHolder.release();
  }
}
