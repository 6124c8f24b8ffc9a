import { createConnection } from 'mysql2/promise';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { QueryRunner } from 'typeorm';
import { targetOf } from './migration-target';

/**
 * What pt-online-schema-change leaves of a changed table when told not to drop it
 * (`--no-drop-old-table`): the table as it was before the change, renamed by the swap.
 */
export const oldCopyOf = (table: string): string => `_${table}_old`;

/** A table's old copy by its name: `_<table>_old`, the table itself being `<table>`. */
const OLD_COPY = /^_(.+)_old$/;

/** Where a node of the cluster takes clients, as the cluster reports it (`wsrep_incoming_addresses`). */
export interface NodeAddress {
  host: string;
  port: number;
}

/** The connection details the migrations use, for a connection of their own to one node. */
export interface NodeLogin {
  user: string;
  password?: string;
  database: string;
  connectTimeout?: number;
}

/** Opens a connection to one node; the spec gives its own. */
export type ConnectNode = (address: NodeAddress, login: NodeLogin) => Promise<Connection>;

const connectNode: ConnectNode = ({ host, port }, { user, password, database, connectTimeout }) =>
  createConnection({ host, port, user, password, database, connectTimeout });

/**
 * The client addresses of the cluster's nodes, or why they are not all known: each node reports
 * its own (`wsrep_node_incoming_address`, by default its bind address and port; `AUTO` where it
 * could not tell, as when it listens on the loopback address alone).
 */
export async function clusterNodeAddresses(queryRunner: QueryRunner): Promise<NodeAddress[] | string> {
  const rows = (await queryRunner.query(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_incoming_addresses', 'wsrep_cluster_size')",
  )) as { Variable_name: string; Value: string }[];
  const status = Object.fromEntries(rows.map((row) => [row.Variable_name.toLowerCase(), row.Value]));
  const size = Number(status.wsrep_cluster_size);
  const listed = (status.wsrep_incoming_addresses ?? '').split(',').map((each) => each.trim());
  const addresses = listed.flatMap((each) => {
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(each);
    return match ? [{ host: match[1], port: Number(match[2]) }] : [];
  });
  if (addresses.length !== size || addresses.length === 0) {
    return (
      `the cluster names the client address of ${addresses.length} of its ${size} nodes ` +
      `(wsrep_incoming_addresses: ${status.wsrep_incoming_addresses || 'none'}; set each node's wsrep_node_incoming_address)`
    );
  }
  return addresses;
}

const one = async (connection: Connection, sql: string): Promise<unknown> =>
  Object.values(((await connection.query<RowDataPacket[]>(sql))[0] ?? [])[0] ?? {})[0];

/** A node reached for a local drop: its connection and its name. */
interface Reached {
  connection: Connection;
  name: string;
}

const describeAddress = ({ host, port }: NodeAddress) => `${host}:${port}`;
const messageOf = (error: unknown) => (error as { code?: string }).code ?? (error as Error).message;

/**
 * Drops `_<table>_old` without holding the cluster's writes, on every node, and where it was left
 * by an earlier run that stopped halfway too (idempotent).
 *
 * Galera replicates a DROP TABLE by Total Order Isolation: every node drops the table at the same
 * point of the replication stream and commits no other write until it has. What the drop costs is
 * the engine deleting the table's file, which grows with the table, however the rows were removed
 * before (docs/scaling.md, "Dropping the old table", has the figures): emptying the table first in
 * small committed chunks leaves the file at its size (InnoDB does not shrink it; the drop of the
 * emptied, purged table took as long), and TRUNCATE TABLE is a DDL replicated the same way that
 * deletes the same file. So each node drops its own copy alone instead, with replication off for
 * that one session (wsrep_on=OFF, and nothing in the binary log, where it would be a local
 * transaction): the writes of the cluster go on meanwhile, through that node too. RSU would not
 * do: it desyncs the node and pauses its commits for the length of the drop. The node the
 * migrations are attached to goes last, so while a copy is left anywhere, it is left there, where
 * the next run looks (dropLeftoverOldCopies).
 *
 * Then one replicated `DROP TABLE IF EXISTS`: a no-op of milliseconds on every node that dropped
 * its copy, and the drop itself on a node that could not be reached (down, it replays it when it
 * rejoins), so the nodes never keep different tables. That is also the whole drop, with the
 * cluster's pause, where the nodes cannot be reached one by one: addresses the cluster does not
 * report, or a user without the privilege to turn replication off for its session (SUPER); a
 * warning says so.
 */
export async function dropOldCopy(
  queryRunner: QueryRunner,
  table: string,
  connect: ConnectNode = connectNode,
): Promise<void> {
  const old = oldCopyOf(table);
  const logger = queryRunner.connection.logger;
  const addresses = await clusterNodeAddresses(queryRunner);
  const missed: string[] = typeof addresses === 'string' ? [addresses] : [];
  const reached: Reached[] = [];
  const { target, password, connectTimeout } = targetOf(queryRunner);
  const login = { user: target.user, password, database: target.database, connectTimeout };
  try {
    for (const address of typeof addresses === 'string' ? [] : addresses) {
      let connection: Connection | undefined;
      try {
        connection = await connect(address, login);
        await connection.query('SET SESSION wsrep_on = OFF, sql_log_bin = 0');
        reached.push({ connection, name: String(await one(connection, 'SELECT @@wsrep_node_name')) });
      } catch (error) {
        connection?.destroy();
        missed.push(`${describeAddress(address)}: ${messageOf(error)}`);
      }
    }
    const own = String(((await queryRunner.query('SELECT @@wsrep_node_name AS name')) as { name: string }[])[0]?.name);
    // The migrations' node last (see above), the others by name: the cluster reports its addresses
    // in no fixed order, and one order run after run makes the migration log comparable.
    reached.sort((a, b) => Number(a.name === own) - Number(b.name === own) || a.name.localeCompare(b.name));
    let left = 0;
    for (const node of reached) {
      const [found] = await node.connection.query<RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
        [old],
      );
      if (Number(found[0]?.n) === 0) continue;
      left += 1;
      const from = Date.now();
      try {
        await node.connection.query(`DROP TABLE IF EXISTS \`${old}\``);
        logger.logMigration(`Dropped ${old} on ${node.name} alone in ${Date.now() - from} ms`);
      } catch (error) {
        missed.push(`${node.name}: ${messageOf(error)}`);
      }
    }
    // Also when nothing was found: a node that was not reached may hold one.
    if (left > 0 || missed.length > 0) {
      const here = missed.length > 0 && (await holds(queryRunner, old));
      const from = Date.now();
      await queryRunner.query(`DROP TABLE IF EXISTS \`${old}\``);
      const took = Date.now() - from;
      // Said where a copy was known to be left for it; a no-op of a run that found none is not news.
      if (missed.length > 0 && (here || left > 0)) {
        logger.log(
          'warn',
          `Dropped ${old} by a replicated DROP TABLE (${took} ms, the cluster's writes held meanwhile where a node ` +
            `still had it), since not every node could drop it alone: ${missed.join('; ')}`,
        );
      }
    }
  } finally {
    for (const node of reached) node.connection.destroy();
  }
}

/** Whether the migrations' node has the table `name` in their database. */
async function holds(queryRunner: QueryRunner, name: string): Promise<boolean> {
  const rows = (await queryRunner.query(
    'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    [name],
  )) as { n: unknown }[];
  return Number(rows[0]?.n) > 0;
}

/**
 * Drops every `_<table>_old` a run that stopped halfway left in the migrations' database (a table
 * `<table>` beside it), as dropOldCopy does: called by the migration runner on a Galera node before
 * it migrates.
 */
export async function dropLeftoverOldCopies(queryRunner: QueryRunner, connect?: ConnectNode): Promise<void> {
  const rows = (await queryRunner.query(
    'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()',
  )) as { name: string }[];
  const tables = new Set(rows.map((row) => row.name));
  for (const name of tables) {
    const table = OLD_COPY.exec(name)?.[1];
    if (table && tables.has(table)) await dropOldCopy(queryRunner, table, connect);
  }
}
