/**
 * The cluster scenario's schema-change drill (docs/scaling.md, "Schema changes"): one instance
 * writing through HAProxy while `plants`, filled to each size, gets an index in each way a Galera
 * cluster can take one, then loses a column; how long writes stopped and what failed, each time.
 */
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import type { LocalCluster } from './cluster';
import { seedUsers } from './db';
import { Answer, writeLoad } from './faults';
import { ROOT } from './harness';
import { sleep } from './sys';

/**
 * - `TOI`: `ALTER TABLE ... ALGORITHM=INPLACE, LOCK=NONE` through HAProxy, as a migration made it
 *   before: Galera's Total Order Isolation, every node at once.
 * - `RSU`: node by node (backups first), each desynced so that HAProxy takes it out of rotation,
 *   then `wsrep_OSU_method=RSU` on it alone.
 * - `runner`: what the migration runner does on a Galera node (galeraLargeTableChange in the
 *   service's build): ALGORITHM=INSTANT where the server can, else pt-online-schema-change.
 */
export type SchemaChangeWay = 'TOI' | 'RSU' | 'runner';

export interface SchemaChangeRound {
  change: 'add index' | 'drop column';
  way: SchemaChangeWay;
  /** Rows in `plants` when the change began. */
  rows: number;
  changeMs: number;
  requests: number;
  failed: number;
  failedStatuses: Record<string, number>;
  /** The longest time between two successful creates that overlaps the change. */
  longestGapMs: number;
  slowestMs: number;
}

const INDEX = 'IDX_bench_schema_change';
const ADD_INDEX = `ADD INDEX ${INDEX} (owner, name)`;

/** The service's own large-table change, from its build (dist/), run on a connection of ours. */
async function runnerChange(url: string, connection: Connection, table: string, alteration: string): Promise<void> {
  const module = (await import(join(ROOT, 'dist', 'database', 'galera-schema-change.js'))) as {
    galeraLargeTableChange: (queryRunner: unknown, table: string, alteration: string) => Promise<void>;
  };
  const queryRunner = {
    query: async (sql: string) => (await connection.query(sql))[0],
    connection: { options: { url }, logger: { logMigration: () => undefined, log: () => undefined } },
  };
  await module.galeraLargeTableChange(queryRunner, table, alteration);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`schema-change drill: ${what} not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
}

const one = async (connection: Connection, sql: string): Promise<string> =>
  String(Object.values(((await connection.query(sql))[0] as Record<string, unknown>[])[0])[0]);

/** The node a new connection through HAProxy reaches. */
async function routedTo(cluster: LocalCluster, database: string): Promise<number> {
  const proxy = await cluster.connectHaproxy(database);
  try {
    return Number((await one(proxy, 'SELECT @@wsrep_node_name')).replace('node', ''));
  } finally {
    await proxy.end();
  }
}

/** Node by node, each out of rotation (desynced) while it alone changes (RSU); node 1, HAProxy's writer, last. */
async function rollingSchemaUpgrade(cluster: LocalCluster, database: string, statement: string): Promise<void> {
  for (const node of [3, 2, 1]) {
    const connection = await cluster.connect(node, database);
    try {
      await connection.query('SET GLOBAL wsrep_desync = ON');
      // Its health agent answers 503 now: after two failed checks (within 2 s) HAProxy takes it
      // out of rotation and closes the connections it had placed there, backup or not.
      await sleep(2000);
      await until(`HAProxy routing away from node ${node}`, async () => (await routedTo(cluster, database)) !== node);
      await connection.query("SET SESSION wsrep_OSU_method = 'RSU'");
      await connection.query(statement);
      await connection.query("SET SESSION wsrep_OSU_method = 'TOI'");
      await connection.query('SET GLOBAL wsrep_desync = OFF');
      await until(
        `node ${node} synced`,
        async () =>
          (await one(
            connection,
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'",
          )) === '4',
      );
    } finally {
      await connection.end();
    }
  }
}

/** The longest time between two successful answers that overlaps `from`-`to`. */
function longestGap(answers: Answer[], from: number, to: number): number {
  const done = answers
    .filter((a) => a.status === 200)
    .map((a) => a.at + a.ms)
    .sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < done.length; i++) {
    if (done[i] >= from && done[i - 1] <= to) longest = Math.max(longest, done[i] - done[i - 1]);
  }
  return longest;
}

interface Change {
  change: SchemaChangeRound['change'];
  way: SchemaChangeWay;
  alteration: string;
}

interface Drill {
  cluster: LocalCluster;
  database: string;
  serviceUrl: string;
  token: string;
  nextId: bigint;
}

/** Makes `alteration` of `plants` in `way`. */
async function alter(drill: Drill, way: SchemaChangeWay, alteration: string): Promise<void> {
  if (way === 'RSU') return rollingSchemaUpgrade(drill.cluster, drill.database, `ALTER TABLE plants ${alteration}`);
  const proxy = await drill.cluster.connectHaproxy(drill.database);
  try {
    if (way === 'TOI') await proxy.query(`ALTER TABLE plants ${alteration}, ALGORITHM=INPLACE, LOCK=NONE`);
    else
      await runnerChange(
        drill.cluster.haproxyUrl(drill.database).replace(/^mariadb:/, 'mysql:'),
        proxy,
        'plants',
        alteration,
      );
  } finally {
    await proxy.end();
  }
}

/** One change under the write load: 2 s of writes before it and 2 s after. */
async function measureChange(
  drill: Drill,
  { change, way, alteration }: Change,
  rows: number,
): Promise<SchemaChangeRound> {
  const load = writeLoad(drill.serviceUrl, drill.token, drill.nextId, 4);
  await sleep(2000);
  const from = Date.now();
  let to: number;
  try {
    await alter(drill, way, alteration);
    to = Date.now();
    await sleep(2000);
  } finally {
    await load.stop();
  }
  drill.nextId = load.next();
  const failures = load.answers.filter((a) => a.status !== 200);
  const failedStatuses: Record<string, number> = {};
  for (const f of failures) failedStatuses[String(f.status)] = (failedStatuses[String(f.status)] ?? 0) + 1;
  return {
    change,
    way,
    rows,
    changeMs: to - from,
    requests: load.answers.length,
    failed: failures.length,
    failedStatuses,
    longestGapMs: longestGap(load.answers, from, to),
    slowestMs: Math.max(0, ...load.answers.map((a) => a.ms)),
  };
}

/**
 * For each size: `plants` filled to it (owners of 1,000 plants, through node 1), then under the
 * write load an index added by each way and dropped again between them, then a column added and
 * dropped by the runner's way.
 */
export async function runSchemaChangeDrill(
  cluster: LocalCluster,
  database: string,
  serviceUrl: string,
  token: string,
  settings: { sizes: number[]; ways: SchemaChangeWay[]; firstId: bigint; log: (line: string) => void },
): Promise<SchemaChangeRound[]> {
  const drill: Drill = { cluster, database, serviceUrl, token, nextId: settings.firstId };
  const results: SchemaChangeRound[] = [];
  let filled = 0;
  for (const [step, size] of settings.sizes.entries()) {
    const admin = await cluster.connect(1, database);
    try {
      const users = Math.ceil(Math.max(0, size - filled) / 1000);
      await seedUsers(admin, `bench-schema-${step}-`, users, 1000);
      filled += users * 1000;
      const changes: Change[] = [
        ...settings.ways.map((way) => ({ change: 'add index' as const, way, alteration: ADD_INDEX })),
        { change: 'drop column', way: 'runner', alteration: 'DROP COLUMN bench_note' },
      ];
      for (const change of changes) {
        if (change.change === 'drop column') {
          await admin.query('ALTER TABLE plants ADD COLUMN bench_note varchar(64) NULL AFTER name');
        }
        const rows = Number(await one(admin, 'SET STATEMENT wsrep_sync_wait = 1 FOR SELECT COUNT(*) FROM plants'));
        const result = await measureChange(drill, change, rows);
        results.push(result);
        settings.log(
          `cluster schema change: ${result.change} by ${result.way} on ${rows} rows took ${result.changeMs} ms; ` +
            `longest write gap ${result.longestGapMs} ms, ${result.failed} of ${result.requests} failed, slowest answer ${result.slowestMs} ms`,
        );
        if (change.change === 'add index') await admin.query(`ALTER TABLE plants DROP INDEX ${INDEX}`);
        // After RSU, HAProxy puts node 1 back after two good checks a second apart.
        await sleep(4000);
      }
    } finally {
      await admin.end();
    }
  }
  return results;
}
