import { DataSource } from 'typeorm';

/**
 * wsrep_sync_wait on every session of a Galera node: 1 (reads) + 2 (UPDATE and DELETE). Galera
 * certifies a write on every node before it is acknowledged, but the other nodes apply it a little
 * later; with this, a SELECT or DELETE first waits until its node has applied everything the
 * cluster had committed when it arrived, so a client reads its own writes through any instance
 * and node. INSERTs need no wait: one that races a not-yet-applied row fails certification and is
 * retried (statement-retry.ts), then finds the duplicate.
 */
export const GALERA_SYNC_WAIT = 3;

interface PoolLike {
  on(event: 'connection', listener: (connection: QueryableConnection) => void): unknown;
  _allConnections?: { toArray?: () => QueryableConnection[] };
}
interface QueryableConnection {
  query(sql: string, callback: (error: unknown) => void): unknown;
}

/**
 * Asks the server once whether it is a Galera node (`@@wsrep_on`; MySQL has no such variable,
 * plain MariaDB answers 0). If it is, every pooled connection, open or opened later, gets
 * GALERA_SYNC_WAIT before its first statement; elsewhere nothing changes, not even the statements
 * sent per connection.
 */
export async function prepareGaleraSessions(dataSource: DataSource): Promise<boolean> {
  if (dataSource.options.type !== 'mysql' && dataSource.options.type !== 'mariadb') return false;
  let on: boolean;
  try {
    const [row] = (await dataSource.query('SELECT @@wsrep_on AS wsrep_on')) as { wsrep_on: unknown }[];
    on = Number(row?.wsrep_on) === 1;
  } catch {
    return false;
  }
  if (!on) return false;
  const pool = (dataSource.driver as unknown as { pool?: PoolLike }).pool;
  if (!pool) return true;
  const setUp = (connection: QueryableConnection) =>
    // A failure here breaks the connection, which the pool then replaces; nothing to report.
    connection.query(`SET SESSION wsrep_sync_wait = ${GALERA_SYNC_WAIT}`, () => undefined);
  // mysql2 emits 'connection' before handing a new connection out, and runs a connection's
  // statements in order, so the setting always precedes the first statement.
  pool.on('connection', setUp);
  for (const connection of pool._allConnections?.toArray?.() ?? []) setUp(connection);
  return true;
}
