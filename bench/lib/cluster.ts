/**
 * The cluster scenario's database side: a local three-node Galera cluster started with
 * scripts/galera-cluster.sh on ports of its own, and the causal-read probe (the list statement on
 * one node with wsrep_sync_wait 0 and 3, idle and while another node takes writes).
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql, { Connection } from 'mysql2/promise';
import { run } from './sys';

export interface LocalCluster {
  /** mariadb://root@127.0.0.1:<node N>/<database> */
  nodeUrl: (node: number, database: string) => string;
  /** HAProxy in front of the three nodes (deploy/haproxy.cfg). */
  haproxyUrl: (database: string) => string;
  /** scripts/galera-cluster.sh with these arguments, on this cluster (kill-node 1, heal-node 1...). */
  script: (...args: string[]) => Promise<void>;
  /** A connection of the benchmark's own to node N, in `database` when given. */
  connect: (node: number, database?: string) => Promise<Connection>;
  /** A connection of the benchmark's own through HAProxy, as the service's are. */
  connectHaproxy: (database?: string) => Promise<Connection>;
  /** The mariadbd pids, so that their CPU counts as the benchmark's, not as other processes'. */
  pids: () => number[];
  startSec: number;
  stop: () => Promise<void>;
}

export async function startCluster(root: string, portBase: number): Promise<LocalCluster> {
  const dir = join(tmpdir(), `plant-store-galera-bench-${portBase}`);
  const env = { ...process.env, GALERA_PORT_BASE: String(portBase), GALERA_DIR: dir };
  const script = join(root, 'scripts', 'galera-cluster.sh');
  const stop = async () => void (await run('bash', [script, 'stop'], { env }));
  const command = async (...args: string[]) => void (await run('bash', [script, ...args], { env }));
  const t0 = Date.now();
  try {
    await run('bash', [script, 'start'], { env });
  } catch (error) {
    await stop().catch(() => undefined);
    const e = error as { stdout?: string; stderr?: string };
    throw new Error(
      `scripts/galera-cluster.sh start failed (the cluster scenario needs mariadb-server, galera-4, haproxy, rsync, socat and percona-toolkit; scripts/ci/galera-packages.sh installs them):\n${e.stdout ?? ''}${e.stderr ?? ''}`,
      { cause: error },
    );
  }
  const startSec = (Date.now() - t0) / 1000;
  const connectTo = (port: number, database?: string) =>
    mysql.createConnection({
      host: '127.0.0.1',
      port,
      user: 'root',
      database,
      charset: 'utf8mb4_unicode_ci',
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
  return {
    nodeUrl: (node, database) => `mariadb://root@127.0.0.1:${portBase + node}/${database}`,
    haproxyUrl: (database) => `mariadb://root@127.0.0.1:${portBase}/${database}`,
    script: command,
    connect: (node, database) => connectTo(portBase + node, database),
    connectHaproxy: (database) => connectTo(portBase, database),
    pids: () =>
      [1, 2, 3]
        .map((node) => join(dir, `node${node}.pid`))
        .filter((file) => existsSync(file))
        .map((file) => Number(readFileSync(file, 'utf8').trim()))
        .filter((pid) => pid > 0),
    startSec,
    stop,
  };
}

export interface CausalProbe {
  /** Whether another node took inserts without pause meanwhile. */
  writes: boolean;
  syncWait: number;
  statements: number;
  latencyMs: { mean: number; p50: number; p99: number };
}

function latency(sorted: number[]): CausalProbe['latencyMs'] {
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, p50: at(0.5), p99: at(0.99) };
}

/**
 * The service's list statement through node 2, `count` times on each of two connections in
 * alternation, one with wsrep_sync_wait=0 and one with 3 (the service's setting), timed by the
 * client. With `writes`, a connection to node 1 inserts rows of another owner without pause
 * meanwhile, so node 2 has something to apply whenever a causal read arrives.
 */
export async function probeCausalReads(
  cluster: LocalCluster,
  database: string,
  owner: string,
  count: number,
  writes: boolean,
): Promise<CausalProbe[]> {
  const readers = [await cluster.connect(2, database), await cluster.connect(2, database)];
  const writer = writes ? await cluster.connect(1, database) : null;
  const settings = [0, 3];
  const times: number[][] = [[], []];
  let writing = writes;
  let nextId = 1;
  const writeLoop = (async () => {
    while (writing && writer) {
      await writer.query('INSERT INTO plants (owner, id, name) VALUES (?, ?, ?)', [
        'bench-causal-writes',
        nextId,
        `written ${nextId}`,
      ]);
      nextId++;
    }
  })();
  try {
    for (const [i, reader] of readers.entries()) await reader.query(`SET SESSION wsrep_sync_wait = ${settings[i]}`);
    for (let n = 0; n < count; n++) {
      for (const [i, reader] of readers.entries()) {
        const t0 = process.hrtime.bigint();
        await reader.query('SELECT id, name, tag FROM plants WHERE owner = ? ORDER BY id LIMIT ?', [owner, 21]);
        times[i].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
  } finally {
    writing = false;
    await writeLoop;
    await Promise.all([...readers, ...(writer ? [writer] : [])].map((c) => c.end()));
  }
  if (writes) {
    const cleanup = await cluster.connect(1, database);
    await cleanup.query('DELETE FROM plants WHERE owner = ?', ['bench-causal-writes']).finally(() => cleanup.end());
  }
  return settings.map((syncWait, i) => ({
    writes,
    syncWait,
    statements: count,
    latencyMs: latency([...times[i]].sort((a, b) => a - b)),
  }));
}
