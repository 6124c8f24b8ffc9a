import { randomUUID } from 'node:crypto';
import { DataSource, Migration, MigrationExecutor, QueryRunner } from 'typeorm';
import { POST_DEPLOYMENT_MIGRATIONS } from './data-source';
import { isUniqueViolation } from './database-errors';
import { isGaleraNode } from './galera';
import { dropLeftoverOldCopies } from './galera-old-copy';
import { galeraLargeTableChange } from './galera-schema-change';
import { LARGE_TABLE_CHANGE } from './migrations/online-ddl';
import { isRetryable, retryReason } from './statement-retry';

/** How long an instance waits for another one to finish migrating before giving up. */
export const MIGRATION_LOCK_TIMEOUT_SECONDS = 120;
/** How long a lock row stays valid without renewal: a crashed holder blocks the others this long at most. */
export const MIGRATION_LOCK_LEASE_SECONDS = 30;
export const MIGRATION_LOCK_TABLE = 'migrations_lock';

const LOCK_NAME = 'migrations';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Which migrations a run applies. At `start-up` on MySQL/MariaDB, the regular ones: each is an
 * expand step the previous release's instances keep serving beside. `post-deployment` runs, in
 * timestamp order, every pending migration, those of POST_DEPLOYMENT_MIGRATIONS included: the
 * contract steps, which remove what only the previous release uses, run by an operator once no
 * instance of it serves (`plantstore migrate --post-deployment`, docs/operations.md "Upgrades").
 * An SQLite file belongs to one process, beside which no other release can be serving: its start-up
 * runs both.
 */
export type MigrationRun = 'start-up' | 'post-deployment';

/** TypeORM's migration executor over the data source's migrations that `run` applies. */
class SelectedMigrations extends MigrationExecutor {
  constructor(
    dataSource: DataSource,
    private readonly postDeployment: boolean,
    queryRunner?: QueryRunner,
  ) {
    super(dataSource, queryRunner);
  }

  protected override getMigrations(): Migration[] {
    const postDeployment = new Set<unknown>(POST_DEPLOYMENT_MIGRATIONS);
    return super
      .getMigrations()
      .filter((migration) => this.postDeployment || !postDeployment.has(migration.instance?.constructor));
  }
}

/** Whether `run` applies post-deployment migrations on this data source. */
function appliesPostDeployment(dataSource: DataSource, run: MigrationRun): boolean {
  return run === 'post-deployment' || !isMysql(dataSource);
}

const isMysql = (dataSource: DataSource) =>
  dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb';

/**
 * The names of the migrations `run` would apply that the database has not had yet, in order (for a
 * command to say what it did).
 */
export async function pendingMigrations(dataSource: DataSource, run: MigrationRun): Promise<string[]> {
  const pending = await new SelectedMigrations(
    dataSource,
    appliesPostDeployment(dataSource, run),
  ).getPendingMigrations();
  return pending.map((migration) => migration.name);
}

/** The migrations each data source's runs applied, in order. */
const appliedBy = new WeakMap<DataSource, string[]>();

/**
 * The names of the migrations that runPendingMigrations applied on `dataSource`, in order: at its
 * opening (the regular ones) and since (for a command to say what it did). Those another instance
 * applied meanwhile are not among them.
 */
export const migrationsApplied = (dataSource: DataSource): string[] => [...(appliedBy.get(dataSource) ?? [])];

const record = (dataSource: DataSource, applied: Migration[]) =>
  appliedBy.set(dataSource, [...(appliedBy.get(dataSource) ?? []), ...applied.map((migration) => migration.name)]);

/**
 * Runs pending migrations once, however many instances start at the same moment. On MySQL and
 * MariaDB the instances take turns on a lock row: one INSERT under a primary key, which on a Galera
 * cluster is certified cluster-wide, so exactly one instance wins wherever the others are attached
 * (GET_LOCK is local to one node there). The winner migrates, renewing its lease meanwhile; the
 * others wait, then find nothing pending. A row whose lease ran out (its holder died) is taken
 * over. MySQL's DDL is not transactional, so without the lock two instances could both start the
 * same CREATE TABLE. On a Galera node the migrations change large tables without stopping the
 * cluster's writes (galeraLargeTableChange), after dropping what a run that stopped halfway through
 * one left (dropLeftoverOldCopies). SQLite is one file for one process; its migrations run
 * in one transaction.
 */
export async function runPendingMigrations(dataSource: DataSource, run: MigrationRun = 'start-up'): Promise<void> {
  if (!isMysql(dataSource)) {
    const executor = new SelectedMigrations(dataSource, appliesPostDeployment(dataSource, run));
    executor.transaction = 'all';
    record(dataSource, await executor.executePendingMigrations());
    return;
  }
  const runner = dataSource.createQueryRunner();
  // The migrations' own connection, which tells changeLargeTable (migrations/online-ddl.ts) how to
  // change a large table on this server.
  const migrating = dataSource.createQueryRunner();
  const galera = await isGaleraNode(dataSource);
  if (galera) migrating.data = { [LARGE_TABLE_CHANGE]: galeraLargeTableChange };
  const executor = new SelectedMigrations(dataSource, appliesPostDeployment(dataSource, run), migrating);
  executor.transaction = 'each';
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
      // What a run that stopped halfway through a large table's change left, gone before anything else.
      if (galera) await dropLeftoverOldCopies(migrating);
      record(dataSource, await runAgainAfterDeadlocks(executor));
    } finally {
      driverOptions.enableQueryTimeout = queryTimeout;
      clearInterval(renewal);
      await runner.query(`DELETE FROM ${MIGRATION_LOCK_TABLE} WHERE name = ? AND holder = ?`, [LOCK_NAME, holder]);
    }
  } finally {
    await migrating.release();
    await runner.release();
  }
}

/** How many times a run of the migrations is made when a deadlock ends it. */
export const MIGRATION_DEADLOCK_TRIES = 3;

/**
 * The pending migrations, the run made again from the migration it stopped at when a deadlock ended
 * it: on a Galera node a migration's transaction is aborted, as a deadlock, when a write or a schema
 * change applied from another node needs what it holds, which says nothing of the migration itself.
 * Every migration may be run again (each checks what is already there), and those before it were
 * recorded as they committed (one transaction each). Every migration applied is returned, those a
 * try committed before its deadlock (no longer pending after it) included.
 */
export async function runAgainAfterDeadlocks(
  executor: Pick<MigrationExecutor, 'executePendingMigrations' | 'getPendingMigrations'>,
): Promise<Migration[]> {
  const applied: Migration[] = [];
  let pending = await executor.getPendingMigrations();
  for (let attempt = 1; ; attempt++) {
    try {
      return [...applied, ...(await executor.executePendingMigrations())];
    } catch (error) {
      if (retryReason(error, false) !== 'deadlock' || attempt >= MIGRATION_DEADLOCK_TRIES) throw error;
      const left = await executor.getPendingMigrations();
      const names = new Set(left.map((migration) => migration.name));
      applied.push(...pending.filter((migration) => !names.has(migration.name)));
      pending = left;
    }
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
