import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { QueryRunner } from 'typeorm';
import { dropOldCopy } from './galera-old-copy';
import { SchemaChangeTarget, targetOf } from './migration-target';
import { LargeTableChange, boundLockWaits, codeOf, online } from './migrations/online-ddl';

/** Percona Toolkit's online schema change (Debian and Ubuntu package `percona-toolkit`), found on PATH. */
export const PT_ONLINE_SCHEMA_CHANGE = 'pt-online-schema-change';

/** How often the tool reports how far its copy is (docs/scaling.md, "Schema changes"). */
export const SCHEMA_CHANGE_PROGRESS_SECONDS = 10;

/** What the server answers an `ALGORITHM=INSTANT` it cannot honour: it changed nothing. */
const NOT_INSTANT = new Set(['ER_ALTER_OPERATION_NOT_SUPPORTED', 'ER_ALTER_OPERATION_NOT_SUPPORTED_REASON']);

/**
 * The tool's command line for one change (docs/scaling.md, "Schema changes"). It copies the table
 * into an altered copy in small chunks, keeps the copy current with triggers meanwhile, and swaps
 * the two with one RENAME: each of its statements is short, so the cluster-wide pause of a schema
 * change becomes many short ones. It leaves the old table (`_<table>_old`) for dropOldCopy, since
 * its own DROP TABLE of it would hold the cluster's writes for as long as the engine takes to
 * delete the table's file, which grows with the table.
 */
export function onlineSchemaChangeArguments(
  target: SchemaChangeTarget,
  table: string,
  alteration: string,
  isolationVariable: string,
  defaultsFile?: string,
): string[] {
  const dsn = [`h=${target.host}`, `P=${target.port}`, `u=${target.user}`, `D=${target.database}`, `t=${table}`];
  // The password in a client option file, never on a command line that `ps` shows.
  if (defaultsFile) dsn.push(`F=${defaultsFile}`);
  return [
    '--alter',
    alteration,
    dsn.join(','),
    '--execute',
    // Galera nodes are not replicas to wait for; flow control is what says the others lag.
    '--recursion-method=none',
    '--max-flow-ctl=25',
    // A chunk holds shared locks on the rows it copies, and a delete of one of them waits for it:
    // chunks of 0.2 s keep that wait short (the tool's default is 0.5 s).
    '--chunk-time=0.2',
    // A chunk that meets the service's writes at a busy spot can lose a deadlock to them several
    // times in a row: more tries, sooner, than the tool's default of 10 a quarter second apart.
    '--tries=copy_rows:200:0.05,create_triggers:100:0.2,drop_triggers:100:0.2,swap_tables:100:0.2',
    // As boundLockWaits: the trigger and swap steps wait at most 2 s for the table's metadata lock,
    // so the statements queued behind them are held no longer, and try again. READ COMMITTED: a
    // chunk locks the rows it copies but not the gaps between them, and a new row in its range is
    // the triggers' to copy. With gap locks, a new plant after an owner's last waits for the chunk
    // on the same node, and the write of another node (the service writes through a second one
    // after a failover) aborts the chunk instead, every time while that owner keeps writing.
    `--set-vars=lock_wait_timeout=2,${isolationVariable}='READ-COMMITTED'`,
    '--charset=utf8mb4',
    // Else it asks Percona's server over the internet for newer versions on every run.
    '--no-version-check',
    '--no-drop-old-table',
    // A line now and then (on stderr): how far the copy is and what it expects to take, for the
    // migration log and `plantstore migrate`.
    `--progress=time,${SCHEMA_CHANGE_PROGRESS_SECONDS}`,
  ];
}

/** The session variable of the isolation level: `transaction_isolation` where the server has it, else `tx_isolation` (MariaDB before 11.1). */
async function isolationVariable(queryRunner: QueryRunner): Promise<string> {
  const rows = (await queryRunner.query(
    "SHOW VARIABLES WHERE Variable_name IN ('transaction_isolation', 'tx_isolation')",
  )) as { Variable_name: string }[];
  return rows.some((row) => row.Variable_name === 'transaction_isolation') ? 'transaction_isolation' : 'tx_isolation';
}

/** Runs the tool, its output line by line to the migration log; throws with its last lines when it fails. */
async function runOnlineSchemaChange(queryRunner: QueryRunner, table: string, alteration: string): Promise<void> {
  const { target, password } = targetOf(queryRunner);
  const folder = password ? await mkdtemp(join(tmpdir(), 'plantstore-osc-')) : undefined;
  const defaultsFile = folder ? join(folder, 'client.cnf') : undefined;
  try {
    if (defaultsFile) await writeFile(defaultsFile, `[client]\npassword=${password}\n`, { mode: 0o600 });
    const logger = queryRunner.connection.logger;
    const last: string[] = [];
    const args = onlineSchemaChangeArguments(
      target,
      table,
      alteration,
      await isolationVariable(queryRunner),
      defaultsFile,
    );
    const child = spawn(PT_ONLINE_SCHEMA_CHANGE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        if (!line.trim()) return;
        logger.logMigration(`${PT_ONLINE_SCHEMA_CHANGE}: ${line.trim()}`);
        last.push(line.trim());
        if (last.length > 12) last.shift();
      });
    }
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      throw new Error(
        `Changing the table ${table} on a Galera cluster needs ${PT_ONLINE_SCHEMA_CHANGE} (the percona-toolkit ` +
          'package) where the migrations run, and it is not on PATH; the image has it (docs/scaling.md, "Schema changes")',
      );
    });
    if (code !== 0) {
      throw new Error(
        `${PT_ONLINE_SCHEMA_CHANGE} could not change the table ${table} (exit code ${code}): ${last.join(' | ')}`,
      );
    }
  } finally {
    if (folder) await rm(folder, { recursive: true, force: true });
  }
}

/**
 * A large table's change on a Galera node (LARGE_TABLE_CHANGE, given by the migration runner).
 * Galera applies a schema change on every node at the same point of the replication stream (Total
 * Order Isolation) and holds every other write of the cluster until it ends: for an index on a
 * million rows that is seconds without a write anywhere. A change the server makes in the table's
 * definition alone (ALGORITHM=INSTANT: adding or dropping a column on MariaDB 10.4 and later) ends
 * within milliseconds, so it is made so; one it cannot make so is refused at once, having changed
 * nothing, and pt-online-schema-change makes it instead, through the same server. A refused
 * statement also committed the migration's open transaction, so the tool waits on no lock of ours.
 * The old table the tool leaves is dropped node by node (dropOldCopy), and before the tool too: the
 * swap renames the table to `_<table>_old`, and one left there by a run that stopped halfway, on
 * some nodes only, would fail that rename on those nodes alone, which Galera answers by taking them
 * out of the cluster.
 */
export const galeraLargeTableChange: LargeTableChange = async (queryRunner, table, alteration) => {
  try {
    await boundLockWaits(queryRunner, () =>
      online(queryRunner, `ALTER TABLE ${table} ${alteration}, ALGORITHM=INSTANT`),
    );
    return;
  } catch (error) {
    if (!NOT_INSTANT.has(codeOf(error) ?? '')) throw error;
  }
  await dropOldCopy(queryRunner, table);
  await runOnlineSchemaChange(queryRunner, table, alteration);
  await dropOldCopy(queryRunner, table);
};
