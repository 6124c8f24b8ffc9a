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
const LOCK_WAIT_SECONDS = 2;
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
