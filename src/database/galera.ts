import { DataSource } from 'typeorm';

/**
 * wsrep_sync_wait on every session of a Galera node: 1 (reads) + 2 (UPDATE and DELETE) + 4 (INSERT).
 * Galera certifies a write on every node before it is acknowledged, but the other nodes apply it a
 * little later; with this, a statement first waits until its node has applied everything the
 * cluster had committed when it arrived, so a client reads its own writes through any instance and
 * node, and a plant's INSERT or DELETE sees every webhook subscription committed before it,
 * wherever it was made (src/webhooks/event-outbox.service.ts).
 */
export const GALERA_SYNC_WAIT = 7;

interface PoolLike {
  on(event: 'connection', listener: (connection: QueryableConnection) => void): unknown;
  _allConnections?: { toArray?: () => QueryableConnection[] };
}
interface QueryableConnection {
  query(...args: unknown[]): unknown;
}

/** The statement that sets GALERA_SYNC_WAIT on a session. */
export const SET_SYNC_WAIT = `SET SESSION wsrep_sync_wait = ${GALERA_SYNC_WAIT}`;
const ignore = () => undefined;

/**
 * Sets the session's causal wait, and sets it again after any statement that fails: a statement
 * aborted halfway (a lost certification) can leave it off, as a trigger that switched it off for
 * its own statement did. mysql2 runs a connection's statements in
 * order, and the setting is queued before the failure is reported, so it always precedes the
 * connection's next statement.
 */
function keepCausal(connection: QueryableConnection): void {
  const query = connection.query.bind(connection);
  connection.query = (...args: unknown[]) => {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      args[args.length - 1] = (error: unknown, ...results: unknown[]) => {
        if (error && (error as { fatal?: unknown }).fatal !== true) query(SET_SYNC_WAIT, ignore);
        return (callback as (...a: unknown[]) => unknown)(error, ...results);
      };
    }
    return query(...args);
  };
  query(SET_SYNC_WAIT, ignore);
}

/**
 * Whether the server is a Galera node: `@@wsrep_on` (MySQL has no such variable, plain MariaDB
 * answers 0; SQLite is never asked).
 */
export async function isGaleraNode(dataSource: DataSource): Promise<boolean> {
  if (dataSource.options.type !== 'mysql' && dataSource.options.type !== 'mariadb') return false;
  try {
    const [row] = (await dataSource.query('SELECT @@wsrep_on AS wsrep_on')) as { wsrep_on: unknown }[];
    return Number(row?.wsrep_on) === 1;
  } catch {
    return false;
  }
}

/**
 * Asks the server once whether it is a Galera node (isGaleraNode). If it is, every pooled
 * connection, open or opened later, gets GALERA_SYNC_WAIT before its first statement; elsewhere
 * nothing changes, not even the statements sent per connection.
 */
export async function prepareGaleraSessions(dataSource: DataSource): Promise<boolean> {
  if (!(await isGaleraNode(dataSource))) return false;
  const pool = (dataSource.driver as unknown as { pool?: PoolLike }).pool;
  if (!pool) return true;
  // mysql2 emits 'connection' before handing a new connection out, so the setting always precedes
  // the first statement. A failure of the SET breaks the connection, which the pool then replaces.
  pool.on('connection', keepCausal);
  for (const connection of pool._allConnections?.toArray?.() ?? []) keepCausal(connection);
  return true;
}

/** What a Galera node says of itself: the status variables readiness and the metrics read. */
export interface GaleraStatus {
  /** `Primary` when the node is in the primary component (the majority). */
  clusterStatus: string;
  /** 1 joining, 2 donor or desynced, 3 joined, 4 synced. */
  localState: number;
  /** Whether the node accepts statements (`wsrep_ready`). */
  ready: boolean;
  /** Nodes in the node's component. */
  clusterSize: number;
}

/**
 * Asks the node for its state, without the causal wait, which a node out of the primary component
 * could not honour.
 */
export async function readGaleraStatus(dataSource: DataSource): Promise<GaleraStatus> {
  const rows = (await dataSource.query(
    'SET STATEMENT wsrep_sync_wait = 0 FOR SHOW STATUS WHERE Variable_name IN ' +
      "('wsrep_cluster_status', 'wsrep_ready', 'wsrep_local_state', 'wsrep_cluster_size')",
  )) as { Variable_name: string; Value: string }[];
  const status = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
  return {
    clusterStatus: String(status.wsrep_cluster_status),
    localState: Number(status.wsrep_local_state),
    ready: status.wsrep_ready === 'ON',
    clusterSize: Number(status.wsrep_cluster_size),
  };
}

/**
 * Whether the node can serve: in the primary component, synced and ready, the rule HAProxy routes
 * by (deploy/clustercheck) and readiness reports.
 */
export function galeraNodeServes(status: GaleraStatus): boolean {
  return status.clusterStatus === 'Primary' && status.ready && status.localState === 4;
}
