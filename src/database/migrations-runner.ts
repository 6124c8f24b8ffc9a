import { randomUUID } from 'node:crypto';
import { DataSource, QueryRunner } from 'typeorm';
import { isUniqueViolation } from './database-errors';
import { isRetryable } from './statement-retry';

/** How long an instance waits for another one to finish migrating before giving up. */
export const MIGRATION_LOCK_TIMEOUT_SECONDS = 120;
/** How long a lock row stays valid without renewal: a crashed holder blocks the others this long at most. */
export const MIGRATION_LOCK_LEASE_SECONDS = 30;
export const MIGRATION_LOCK_TABLE = 'migrations_lock';

const LOCK_NAME = 'migrations';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs pending migrations once, however many instances start at the same moment. On MySQL and
 * MariaDB the instances take turns on a lock row: one INSERT under a primary key, which on a Galera
 * cluster is certified cluster-wide, so exactly one instance wins wherever the others are attached
 * (GET_LOCK is local to one node there). The winner migrates, renewing its lease meanwhile; the
 * others wait, then find nothing pending. A row whose lease ran out (its holder died) is taken
 * over. MySQL's DDL is not transactional, so without the lock two instances could both start the
 * same CREATE TABLE. SQLite is one file for one process; its migrations run in one transaction.
 */
export async function runPendingMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'mysql' && dataSource.options.type !== 'mariadb') {
    await dataSource.runMigrations({ transaction: 'all' });
    return;
  }
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query(
      `CREATE TABLE IF NOT EXISTS ${MIGRATION_LOCK_TABLE} (name VARCHAR(64) NOT NULL PRIMARY KEY, ` +
        'holder CHAR(36) NOT NULL, expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB',
    );
    const holder = randomUUID();
    await acquire(runner, holder);
    const renewal = setInterval(() => void renew(runner, holder), (MIGRATION_LOCK_LEASE_SECONDS * 1000) / 3);
    // A migration's statement may wait longer than a request's (a table's metadata lock, a backfill),
    // so the statement timeout is off while they run, before this instance serves; a migration that
    // changes a table in use bounds its own lock waits (see EventsRecordedByTheService).
    const driverOptions = dataSource.driver.options as { enableQueryTimeout?: boolean };
    const queryTimeout = driverOptions.enableQueryTimeout;
    driverOptions.enableQueryTimeout = false;
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      driverOptions.enableQueryTimeout = queryTimeout;
      clearInterval(renewal);
      await runner.query(`DELETE FROM ${MIGRATION_LOCK_TABLE} WHERE name = ? AND holder = ?`, [LOCK_NAME, holder]);
    }
  } finally {
    await runner.release();
  }
}

async function acquire(runner: QueryRunner, holder: string): Promise<void> {
  const deadline = Date.now() + MIGRATION_LOCK_TIMEOUT_SECONDS * 1000;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      await runner.query(`DELETE FROM ${MIGRATION_LOCK_TABLE} WHERE name = ? AND expires_at < UTC_TIMESTAMP(6)`, [
        LOCK_NAME,
      ]);
      await runner.query(
        `INSERT INTO ${MIGRATION_LOCK_TABLE} (name, holder, expires_at) ` +
          `VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ${MIGRATION_LOCK_LEASE_SECONDS} SECOND)`,
        [LOCK_NAME, holder],
      );
      return;
    } catch (error) {
      // Held by another instance, or another instance's insert won certification (a deadlock on Galera).
      if (!isUniqueViolation(error) && !isRetryable(error, false)) throw error;
    }
    if (Date.now() + wait > deadline) {
      throw new Error(`Another instance held the migration lock for over ${MIGRATION_LOCK_TIMEOUT_SECONDS} s`);
    }
    await sleep(wait * (0.5 + Math.random() / 2));
  }
}

async function renew(runner: QueryRunner, holder: string): Promise<void> {
  try {
    await runner.query(
      `UPDATE ${MIGRATION_LOCK_TABLE} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ${MIGRATION_LOCK_LEASE_SECONDS} SECOND ` +
        'WHERE name = ? AND holder = ?',
      [LOCK_NAME, holder],
    );
  } catch {
    // The next renewal tries again; a lease is three renewals long.
  }
}
