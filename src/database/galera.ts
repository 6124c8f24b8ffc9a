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

const galeraSources = new WeakSet<DataSource>();

/** Whether `dataSource` runs on a Galera node (decided once, by prepareGaleraSessions). */
export function isGalera(dataSource: DataSource): boolean {
  return galeraSources.has(dataSource);
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
  galeraSources.add(dataSource);
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

/**
 * Whether this Galera node can serve clients now: synced and in the primary component. A joiner,
 * a donor or a node cut off from the majority answers "WSREP has not yet prepared node for
 * application use" (1047) to writes, and its causal reads time out (1205); readiness says so.
 */
export async function galeraNodeReady(dataSource: DataSource): Promise<boolean> {
  // Without the causal wait, which a node out of the cluster cannot satisfy.
  const rows = (await dataSource.query(
    "SET STATEMENT wsrep_sync_wait = 0 FOR SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state')",
  )) as { Variable_name: string; Value: string }[];
  const status = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
  return status.wsrep_ready === 'ON' && status.wsrep_local_state === '4';
}
