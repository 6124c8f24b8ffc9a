import { QueryRunner } from 'typeorm';

/**
 * Schema changes made while the previous release serves (docs/operations.md, "Upgrades"). Shared by
 * the migrations that shipped with it, so it is as frozen as they are: a change of behaviour is a
 * new function, never an edit of these.
 *
 * A change to a table waits for its metadata lock, and while it waits every statement on that table
 * queues behind it: the session's wait is bounded to LOCK_WAIT_SECONDS, so they are held that long at
 * most, and the change is tried again until it gets the lock between their statements.
 */
export const LOCK_WAIT_SECONDS = 2;
const LOCK_ATTEMPTS = 60;

/** The driver's error code of a failed statement (mysql2's or better-sqlite3's). */
export const codeOf = (error: unknown): string | undefined =>
  (error as { driverError?: { code?: string }; code?: string }).driverError?.code ?? (error as { code?: string }).code;

/** Runs `work` with the session's metadata-lock wait bounded (MySQL/MariaDB). */
export async function boundLockWaits(queryRunner: QueryRunner, work: () => Promise<void>): Promise<void> {
  await queryRunner.query(`SET SESSION lock_wait_timeout = ${LOCK_WAIT_SECONDS}`);
  try {
    await work();
  } finally {
    await queryRunner.query('SET SESSION lock_wait_timeout = DEFAULT');
  }
}

/** One schema change inside `boundLockWaits`, tried again while its lock wait times out. */
export async function online(queryRunner: QueryRunner, statement: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await queryRunner.query(statement);
      return;
    } catch (error) {
      if (codeOf(error) !== 'ER_LOCK_WAIT_TIMEOUT' || attempt >= LOCK_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
    }
  }
}

/**
 * How the process that runs the migrations changes a large table on the server it migrates, handed
 * to migrations as `queryRunner.data[LARGE_TABLE_CHANGE]` (src/database/migrations-runner.ts gives
 * the Galera way on a Galera node). It lives with the runner, not here: it is how a change is
 * applied, which may improve after a migration has shipped, not what the migration changes.
 */
export type LargeTableChange = (queryRunner: QueryRunner, table: string, alteration: string) => Promise<void>;
export const LARGE_TABLE_CHANGE = 'largeTableChange';

/**
 * `ALTER TABLE <table> <alteration>` (MySQL/MariaDB) for a table that may hold millions of rows,
 * where building an index or rebuilding the table takes seconds to minutes. On one server an
 * in-place change lets writes go on, and this is `online` inside `boundLockWaits`. On a Galera
 * cluster every node applies a schema change at the same point of the replication stream and
 * holds every other write until it ends, so the runner gives another way
 * (LARGE_TABLE_CHANGE); processes that give none (the TypeORM CLI) change it as on one server.
 * `alteration` names no ALGORITHM or LOCK: the way chooses them.
 */
export async function changeLargeTable(queryRunner: QueryRunner, table: string, alteration: string): Promise<void> {
  const way = (queryRunner.data as Record<string, unknown> | undefined)?.[LARGE_TABLE_CHANGE];
  if (typeof way === 'function') return (way as LargeTableChange)(queryRunner, table, alteration);
  await boundLockWaits(queryRunner, () => online(queryRunner, `ALTER TABLE ${table} ${alteration}`));
}
