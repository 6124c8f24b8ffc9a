import { channel } from 'node:diagnostics_channel';

/**
 * Errors after which the statement certainly did not take effect, so running it again is safe
 * whatever it was: a deadlock (on Galera also a write-set that lost certification, which the
 * server reports as a deadlock at commit; the transaction was rolled back), and a Galera node that
 * refused the statement because it is not ready for clients (joining, donor, non-primary).
 */
const DEADLOCK = { code: 'ER_LOCK_DEADLOCK', errno: 1213 };
const NODE_NOT_READY = { code: 'ER_UNKNOWN_COM_ERROR', errno: 1047 };

/**
 * Failures to get a connection at all (the statement was never sent), e.g. HAProxy accepting and
 * then closing because the node behind it died. A statement that was sent and lost its connection
 * is different: a write may have committed, so only reads are run again.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
]);

export interface RetryOptions {
  /** A read (or any statement without effects): also run again after a lost connection. */
  readOnly: boolean;
  /** Attempts in all, the first included. */
  attempts?: number;
  /** Upper bound of the first backoff; it doubles after each failure, chosen at random below the bound. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** No attempt starts later than this after the first one began. */
  windowMs?: number;
}

/**
 * The failures worth retrying come back within milliseconds (a lost certification, a node not
 * ready, a connection refused or already closed). One that came back only after a wait (HAProxy
 * trying a dead node until it gave up, a node waiting for a new cluster view) would mostly wait
 * again, and a failing call would take a wait per attempt instead of one: the window keeps a
 * failing statement within one connection wait and one statement wait (DB_CONNECT_TIMEOUT_MS +
 * DB_QUERY_TIMEOUT_MS) plus the window.
 */
export const STATEMENT_RETRY_DEFAULTS = { attempts: 4, baseDelayMs: 15, maxDelayMs: 250, windowMs: 1000 } as const;

/** The bound below which the wait after the `attempt`-th failure (from 1) is chosen at random. */
export function backoffBoundMs(
  attempt: number,
  { baseDelayMs, maxDelayMs }: { baseDelayMs: number; maxDelayMs: number } = STATEMENT_RETRY_DEFAULTS,
): number {
  return Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
}

interface DriverFields {
  code?: unknown;
  errno?: unknown;
  driverError?: DriverFields;
}

function driverFields(error: unknown): DriverFields {
  if (typeof error !== 'object' || error === null) return {};
  const outer = error as DriverFields;
  return outer.driverError ?? outer;
}

/** Why a statement is run again: a deadlock or lost certification, a Galera node not ready, no connection. */
export type RetryReason = 'deadlock' | 'node_not_ready' | 'connection';

/** Why `error` allows running the statement once more (see the codes above), or undefined when it does not. */
export function retryReason(error: unknown, readOnly: boolean): RetryReason | undefined {
  const { code, errno } = driverFields(error);
  if (code === DEADLOCK.code || Number(errno) === DEADLOCK.errno) return 'deadlock';
  if (code === NODE_NOT_READY.code || Number(errno) === NODE_NOT_READY.errno) return 'node_not_ready';
  if (!CONNECTION_CODES.has(String(code))) return undefined;
  // TypeORM wraps only failures of a statement it sent (QueryFailedError, with the driver's error as
  // `driverError`); a bare driver error came from getting the connection.
  return readOnly || !(typeof error === 'object' && error !== null && 'driverError' in error)
    ? 'connection'
    : undefined;
}

export function isRetryable(error: unknown, readOnly: boolean): boolean {
  return retryReason(error, readOnly) !== undefined;
}

/**
 * Each time a statement or transaction is run again, `{ reason }` is published here, for the
 * metrics (database.metrics.ts); only failures publish, and only while someone listens.
 */
export const STATEMENT_RETRIES = channel('plant-store.database.statement-retry');

/**
 * Runs one single-statement call (autocommit), or one whole transaction, never a statement inside
 * a larger transaction, again after a failure that left nothing applied, a bounded number of times with full-jitter
 * exponential backoff and within a time window, so clients get what one server would have
 * answered. With the defaults the backoff adds at most 15 + 30 + 60 ms.
 */
export async function withStatementRetry<T>(run: () => Promise<T>, options: RetryOptions): Promise<T> {
  const attempts = options.attempts ?? STATEMENT_RETRY_DEFAULTS.attempts;
  const base = options.baseDelayMs ?? STATEMENT_RETRY_DEFAULTS.baseDelayMs;
  const max = options.maxDelayMs ?? STATEMENT_RETRY_DEFAULTS.maxDelayMs;
  const window = options.windowMs ?? STATEMENT_RETRY_DEFAULTS.windowMs;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const reason = attempt < attempts ? retryReason(error, options.readOnly) : undefined;
      if (reason === undefined) throw error;
      const delay = Math.random() * backoffBoundMs(attempt, { baseDelayMs: base, maxDelayMs: max });
      if (Date.now() + delay - started >= window) throw error;
      if (STATEMENT_RETRIES.hasSubscribers) STATEMENT_RETRIES.publish({ reason });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
