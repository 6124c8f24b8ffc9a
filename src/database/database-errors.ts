/**
 * Classifies driver errors from mysql2 and better-sqlite3, whether raw or wrapped in TypeORM's
 * QueryFailedError (which keeps the original as `driverError`).
 */
interface DriverError {
  code?: unknown;
  errno?: unknown;
  fatal?: unknown;
  name?: unknown;
  driverError?: DriverError;
}

const UNIQUE_VIOLATION_CODES = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);

/** Errors that mean "the database cannot be reached or cannot serve now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  // A Galera node not ready for clients (joining, donor, non-primary): "WSREP has not yet prepared node".
  'ER_UNKNOWN_COM_ERROR',
  // A commit the server could not complete, as a Galera node does at the moment it leaves the primary
  // component ("Error while appending streaming replication fragment (provider status: Not connected
  // to Primary Component)"). Not retried (statement-retry.ts): whether a write that got
  // this far took effect on the other nodes is not known, so the client decides.
  'ER_ERROR_DURING_COMMIT',
  'ER_QUERY_TIMEOUT',
  'ER_STATEMENT_TIMEOUT',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
]);

const UNAVAILABLE_NAMES = new Set([
  'CannotExecuteNotConnectedError',
  'ConnectionIsNotSetError',
  'ConnectionNotFoundError',
]);

function causes(error: unknown): DriverError[] {
  if (typeof error !== 'object' || error === null) return [];
  const outer = error as DriverError;
  return outer.driverError ? [outer, outer.driverError] : [outer];
}

export function isUniqueViolation(error: unknown): boolean {
  return causes(error).some((e) => UNIQUE_VIOLATION_CODES.has(String(e.code)));
}

/** SQLite extended codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT) share their primary code's meaning. */
function primaryCode(code: unknown): string {
  return String(code).replace(/^(SQLITE_[A-Z]+)_[A-Z_]+$/, '$1');
}

/**
 * The schema is not there (a table renamed or dropped, the database dropped): no call can be served
 * until an operator restores it, as when the server is down. SQLite reports it only in the message.
 */
function isMissingSchema(e: DriverError): boolean {
  if (e.code === 'ER_NO_SUCH_TABLE' || e.code === 'ER_BAD_DB_ERROR') return true;
  return e.code === 'SQLITE_ERROR' && /^no such table: /.test(String((e as { message?: unknown }).message));
}

export function isDatabaseUnavailable(error: unknown): boolean {
  return causes(error).some(
    (e) =>
      UNAVAILABLE_CODES.has(primaryCode(e.code)) ||
      isMissingSchema(e) ||
      UNAVAILABLE_NAMES.has(String(e.name)) ||
      // mysql2 marks errors that broke the connection itself as fatal.
      e.fatal === true,
  );
}
