import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { mysqlConnection } from './databases';
import { TestApp, bearer, startTestApp } from './test-app';

const SCRIPT = join(__dirname, '..', '..', 'scripts', 'galera-cluster.sh');
const run = promisify(execFile);

/**
 * The cluster tests run when TEST_GALERA=1 (they need mariadb-server, galera-4, haproxy, rsync,
 * socat and percona-toolkit: scripts/ci/galera.sh installs them). TEST_REQUIRE_GALERA=1 (CI) turns a skip into a failure.
 */
export function galeraEnabled(): boolean {
  if (process.env.TEST_GALERA !== '1' && process.env.TEST_REQUIRE_GALERA === '1') {
    throw new Error('TEST_REQUIRE_GALERA=1 but TEST_GALERA is not 1');
  }
  return process.env.TEST_GALERA === '1';
}

export const describeGalera = (name: string, fn: () => void): void =>
  galeraEnabled()
    ? describe(name, fn)
    : describe.skip(`${name} (skipped: set TEST_GALERA=1 to run on a local Galera cluster)`, fn);

/** What a node says of itself (`SHOW GLOBAL STATUS`). */
export interface NodeState {
  clusterStatus: string;
  localState: number;
  ready: string;
}

export interface GaleraCluster {
  /** HAProxy in front of the three nodes (deploy/haproxy.cfg), database `database`. */
  haproxyUrl: (database: string) => string;
  /** Node 1, 2 or 3 directly. */
  nodeUrl: (node: number, database: string) => string;
  /** SIGKILL, as a crash. */
  killNode: (node: number) => Promise<void>;
  /** Starts a stopped node (with extra server options) and waits until it has rejoined and synced. */
  startNode: (node: number, ...options: string[]) => Promise<void>;
  /** Deletes a stopped node's data, so that it rejoins by a full state transfer (SST). */
  wipeNode: (node: number) => Promise<void>;
  /** Cuts the node off from the others (`gmcast.isolate=1`); resolves once it knows it is out of the primary component. */
  isolateNode: (node: number) => Promise<void>;
  /** Ends the isolation; resolves once the node has rejoined and synced. */
  healNode: (node: number) => Promise<void>;
  /** Stops HAProxy (every connection through it is cut) and starts it again. */
  restartHaproxy: () => Promise<void>;
  /** Runs one statement on a node directly, with a connection of its own. */
  onNode: <T = RowDataPacket[]>(node: number, sql: string, values?: unknown[]) => Promise<T>;
  state: (node: number) => Promise<NodeState>;
  /** The node a new connection through HAProxy reaches (its wsrep_node_name), or null when none does. */
  routedTo: () => Promise<string | null>;
  /** What the node's health agent (deploy/clustercheck) answers HAProxy. */
  agent: (node: number) => Promise<{ status: number; body: string }>;
  /** The node's error log, where it reports its state transfers. */
  log: (node: number) => string;
  /** Creates `database` (empty) on the cluster. */
  createDatabase: (database: string) => Promise<void>;
  stop: () => Promise<void>;
}

/** The ports a test cluster may use: TEST_GALERA_PORT_BASE (14400) and the 50 above it per file. */
export const testPortBase = (slot = 0): number => Number(process.env.TEST_GALERA_PORT_BASE ?? 14400) + 50 * slot;

/**
 * A three-node cluster behind HAProxy of the test's own (scripts/galera-cluster.sh), on its own
 * ports (from testPortBase) and folder, so a developer's cluster is left alone.
 */
export async function startGaleraCluster(base = testPortBase()): Promise<GaleraCluster> {
  const dir = join(tmpdir(), `plant-store-galera-test-${base}`);
  const env = { ...process.env, GALERA_PORT_BASE: String(base), GALERA_DIR: dir };
  const script = (...args: string[]) => run(SCRIPT, args, { env, timeout: 120_000 });
  const url = (port: number, database: string) => `mariadb://root@127.0.0.1:${port}/${database}`;
  const withConnection = async <T>(port: number, use: (connection: Connection) => Promise<T>): Promise<T> => {
    const connection = await mysqlConnection(url(port, ''), '');
    try {
      return await use(connection);
    } finally {
      connection.destroy();
    }
  };
  const onNode = <T>(node: number, sql: string, values: unknown[] = []) =>
    withConnection(base + node, async (connection) => (await connection.query(sql, values))[0] as T);
  const cluster: GaleraCluster = {
    haproxyUrl: (database) => url(base, database),
    nodeUrl: (node, database) => url(base + node, database),
    killNode: async (node) => void (await script('kill-node', String(node))),
    startNode: async (node, ...options) => void (await script('start-node', String(node), ...options)),
    wipeNode: (node) => rm(join(dir, `node${node}`), { recursive: true, force: true }),
    isolateNode: async (node) => void (await script('isolate-node', String(node))),
    healNode: async (node) => void (await script('heal-node', String(node))),
    restartHaproxy: async () => void (await script('restart-haproxy')),
    onNode,
    state: async (node) => {
      const rows = await onNode<{ Variable_name: string; Value: string }[]>(
        node,
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_local_state', 'wsrep_ready')",
      );
      const status = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
      return {
        clusterStatus: status.wsrep_cluster_status,
        localState: Number(status.wsrep_local_state),
        ready: status.wsrep_ready,
      };
    },
    routedTo: () =>
      withConnection(base, async (connection) => {
        const [rows] = await connection.query<RowDataPacket[]>('SELECT @@wsrep_node_name AS node');
        return String(rows[0].node);
      }).catch(() => null),
    agent: (node) =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: base + 40 + node, path: '/', timeout: 5000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
        });
        req.on('timeout', () => req.destroy(new Error('the health agent did not answer')));
        req.on('error', reject);
        req.end();
      }),
    log: (node) => readFileSync(join(dir, `node${node}.log`), 'utf8'),
    createDatabase: (database) =>
      withConnection(base, async (connection) => {
        await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
        await connection.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
      }),
    stop: async () => void (await script('stop')),
  };
  try {
    await script('start');
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    throw error;
  }
  return cluster;
}

/**
 * An instance of the real app (as startTestApp builds it) on the MariaDB server at `url`. Started
 * one after another: startTestApp configures through process.env.
 */
export async function startInstance(url: string, env: Record<string, string> = {}): Promise<TestApp> {
  // 'sqlite' only skips creating a database on TEST_DATABASE_URL's server; DATABASE_URL decides.
  return startTestApp('sqlite', { ...env, DATABASE_URL: url, SQLITE_PATH: '' });
}

/** One answer of a write load: when it was sent, how long it took, what came back. */
export interface LoadAnswer {
  op: 'create' | 'read';
  id: number;
  status: number;
  at: number;
  ms: number;
  body: unknown;
}

export interface WriteLoad {
  answers: LoadAnswer[];
  /** Ids whose create answered 200. */
  acknowledged: number[];
  /** Reads through the other instance that answered 200 without a plant just acknowledged. */
  staleReads: string[];
  /** Answers that are not 2xx (what a client saw fail). */
  failures: () => LoadAnswer[];
  /** Stops the writers and waits for the requests they have in flight. */
  stop: () => Promise<void>;
}

/**
 * `writers` clients creating plants one after another through `writer`, from `firstId` up; each
 * acknowledged create is then read through `reader` (another instance) when one is given, which
 * must see it: read-your-writes across instances.
 */
export function startWriteLoad({
  writer,
  reader,
  token,
  firstId,
  writers = 4,
}: {
  writer: TestApp;
  reader?: TestApp;
  token: string;
  firstId: number;
  writers?: number;
}): WriteLoad {
  const load: WriteLoad = {
    answers: [],
    acknowledged: [],
    staleReads: [],
    failures: () => load.answers.filter((answer) => answer.status >= 300),
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
  let running = true;
  let nextId = firstId;
  const timed = async (op: LoadAnswer['op'], id: number, send: () => Promise<{ status: number; body: unknown }>) => {
    const at = Date.now();
    const res = await send();
    const answer = { op, id, status: res.status, at, ms: Date.now() - at, body: res.body };
    load.answers.push(answer);
    return answer;
  };
  const loop = async () => {
    while (running) {
      const id = nextId++;
      const created = await timed('create', id, () =>
        writer
          .http()
          .post('/plants')
          .set(bearer(token))
          .set('Content-Type', 'application/json')
          .send(`{"id":${id},"name":"Under load"}`),
      );
      if (created.status !== 200) continue;
      load.acknowledged.push(id);
      if (!reader) continue;
      const read = await timed('read', id, () =>
        reader
          .http()
          .get(`/plants?after=${id - 1}&limit=1`)
          .set(bearer(token)),
      );
      const listed = read.body as { id?: number }[];
      if (read.status === 200 && listed[0]?.id !== id) load.staleReads.push(`${id}: ${JSON.stringify(listed)}`);
    }
  };
  const loops = Array.from({ length: writers }, loop);
  return load;
}

/** From the fault to the moment the last failing answer arrived (0 when nothing failed). */
export const errorWindowMs = (failures: LoadAnswer[], faultAt: number): number =>
  failures.length === 0 ? 0 : Math.max(...failures.map((answer) => answer.at + answer.ms)) - faultAt;

/**
 * The longest time between two successful creates (by when their answers arrived) that overlaps
 * `from`-`to`: how long no write got through while something happened then.
 */
export function longestGapMs(load: WriteLoad, from: number, to: number): number {
  const done = load.answers
    .filter((answer) => answer.op === 'create' && answer.status === 200)
    .map((answer) => answer.at + answer.ms)
    .sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < done.length; i++) {
    if (done[i] >= from && done[i - 1] <= to) longest = Math.max(longest, done[i] - done[i - 1]);
  }
  return longest;
}

/** The measurements docs/scaling.md's failure table quotes. */
export function report(what: string, load: WriteLoad, faultAt: number, changes?: ClusterSample[]): void {
  const failures = load.failures();
  const messages = [...new Set(failures.map((f) => (f.body as { message?: string }).message))];
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  process.stdout.write(
    `${what}: ${load.answers.length} requests, ${load.acknowledged.length} creates acknowledged, ` +
      `${failures.length} answered 503 (${failures.filter((f) => f.op === 'create').length} creates, ` +
      `${failures.filter((f) => f.op === 'read').length} reads; sent at ${[...new Set(failures.map((f) => seconds(f.at - faultAt)))].join(', ') || '-'} s), ` +
      `error window ${errorWindowMs(failures, faultAt)} ms after the fault, ` +
      `slowest answer ${Math.max(0, ...load.answers.map((answer) => answer.ms))} ms` +
      (messages.length ? `; messages: ${messages.join(' | ')}` : '') +
      (changes ? `; routing and agents: ${describeChanges(changes, faultAt)}` : '') +
      '\n',
  );
}

/** What HAProxy routes to and what each node's agent answers, at one moment. */
export interface ClusterSample {
  at: number;
  routed: string | null;
  agents: number[];
}

/**
 * Samples where new connections go and what the three agents answer, about every 100 ms, keeping
 * the changes: what a test prints when a failure needs explaining.
 */
export function watchCluster(cluster: GaleraCluster): { changes: ClusterSample[]; stop: () => Promise<void> } {
  const changes: ClusterSample[] = [];
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const [routed, ...agents] = await Promise.all([
        cluster.routedTo(),
        ...[1, 2, 3].map((node) =>
          cluster.agent(node).then(
            (answer) => answer.status,
            () => 0,
          ),
        ),
      ]);
      const last = changes[changes.length - 1];
      if (!last || last.routed !== routed || last.agents.join() !== agents.join())
        changes.push({ at: Date.now(), routed: routed as string | null, agents: agents as number[] });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    changes,
    stop: async () => {
      watching = false;
      await loop;
    },
  };
}

/** The samples as a line: seconds from `since`, the node routed to, and the agents' statuses. */
export const describeChanges = (changes: ClusterSample[], since: number): string =>
  changes.map((c) => `${((c.at - since) / 1000).toFixed(1)}s ${c.routed ?? 'none'} [${c.agents.join(' ')}]`).join(', ');
