import { DataSource } from 'typeorm';

interface QueryableConnection {
  query(...args: unknown[]): unknown;
}
interface PoolLike {
  on(event: 'connection', listener: (connection: QueryableConnection) => void): unknown;
  _allConnections?: { toArray?: () => QueryableConnection[] };
}

/** mysql2's failure of a statement that got no answer in time: mapped to 503, its connection replaced. */
export function statementTimedOut(): Error {
  return Object.assign(new Error('Query inactivity timeout'), {
    code: 'PROTOCOL_SEQUENCE_TIMEOUT',
    errno: 'PROTOCOL_SEQUENCE_TIMEOUT',
    syscall: 'query',
  });
}

/**
 * The statement timeout (DB_QUERY_TIMEOUT_MS) counted as the event loop sees it: a statement fails
 * when its answer has not arrived by the time the loop has looked for it after the deadline, not as
 * soon as the deadline's timer runs. mysql2 runs its own timeout as a plain timer, and after the
 * loop was held (a synchronous write, a long collection, the process not scheduled) for longer than
 * the timeout, the timers run before the loop reads the sockets: every statement in flight then
 * failed with 503, and its connection was replaced, though the database had answered it at once.
 * Here the timer only schedules the check for after the loop's next look at the sockets (an
 * immediate runs after the poll phase of the same turn). The answer of a statement that did time
 * out is dropped when it comes; the caller replaces its connection (the failure is mysql2's own).
 */
function answeredInTime(connection: QueryableConnection): void {
  const query = connection.query.bind(connection);
  connection.query = (...args: unknown[]) => {
    const [options] = args;
    const last = args.length - 1;
    const callback = args[last];
    const timeout = typeof options === 'object' && options !== null ? (options as { timeout?: unknown }).timeout : 0;
    if (last === 0 || typeof callback !== 'function' || typeof timeout !== 'number' || timeout <= 0) {
      return query(...args);
    }
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          (callback as (error: unknown) => void)(statementTimedOut());
        }),
      timeout,
    );
    args[0] = { ...(options as object), timeout: undefined };
    args[last] = (...results: unknown[]) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      (callback as (...results: unknown[]) => void)(...results);
    };
    return query(...args);
  };
}

/**
 * Every pooled connection, open or opened later, times its statements as answeredInTime says, on the
 * statements that are given a timeout (TypeORM's query runner and PooledStatements give it on
 * MySQL/MariaDB). SQLite has no pool and no timeout.
 */
export function timeStatementsByTheLoop(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { pool?: PoolLike }).pool;
  if (!pool) return;
  // mysql2 emits 'connection' before handing a new connection out, so no statement precedes it.
  pool.on('connection', answeredInTime);
  for (const connection of pool._allConnections?.toArray?.() ?? []) answeredInTime(connection);
}
