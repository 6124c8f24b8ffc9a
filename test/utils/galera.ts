import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mysqlConnection } from './databases';
import { TestApp, startTestApp } from './test-app';

const SCRIPT = join(__dirname, '..', '..', 'scripts', 'galera-cluster.sh');
const run = promisify(execFile);

/**
 * The cluster tests run when TEST_GALERA=1 (they need mariadb-server, galera-4, haproxy and rsync:
 * scripts/ci/galera.sh installs them). TEST_REQUIRE_GALERA=1 (CI) turns a skip into a failure.
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

export interface GaleraCluster {
  /** HAProxy in front of the three nodes (deploy/haproxy.cfg), database `database`. */
  haproxyUrl: (database: string) => string;
  /** Node 1, 2 or 3 directly. */
  nodeUrl: (node: number, database: string) => string;
  /** SIGKILL, as a crash. */
  killNode: (node: number) => Promise<void>;
  /** Starts a stopped node and waits until it has rejoined and synced. */
  startNode: (node: number) => Promise<void>;
  /** Creates `database` (empty) on the cluster. */
  createDatabase: (database: string) => Promise<void>;
  stop: () => Promise<void>;
}

/**
 * A three-node cluster behind HAProxy of the test's own (scripts/galera-cluster.sh), on its own
 * ports (TEST_GALERA_PORT_BASE, default 14400) and folder, so a developer's cluster is left alone.
 */
export async function startGaleraCluster(): Promise<GaleraCluster> {
  const base = Number(process.env.TEST_GALERA_PORT_BASE ?? 14400);
  const env = {
    ...process.env,
    GALERA_PORT_BASE: String(base),
    GALERA_DIR: join(tmpdir(), `plant-store-galera-test-${base}`),
  };
  const script = (...args: string[]) => run(SCRIPT, args, { env, timeout: 120_000 });
  const url = (port: number, database: string) => `mariadb://root@127.0.0.1:${port}/${database}`;
  const cluster: GaleraCluster = {
    haproxyUrl: (database) => url(base, database),
    nodeUrl: (node, database) => url(base + node, database),
    killNode: async (node) => void (await script('kill-node', String(node))),
    startNode: async (node) => void (await script('start-node', String(node))),
    createDatabase: async (database) => {
      const connection = await mysqlConnection(url(base, ''), '');
      try {
        await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
        await connection.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
      } finally {
        await connection.end();
      }
    },
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
