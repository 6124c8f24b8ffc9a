import Redis from 'ioredis';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './service-process';

/**
 * A Redis Sentinel deployment on this machine, as operators run one: a primary, one replica and three
 * sentinels (quorum 2), each its own process with its own folder, on free loopback ports. Timeouts
 * are short so that a failover takes seconds: a primary is "down" after 1 s of silence.
 */
export interface SentinelRig {
  /** The Sentinel group name. */
  name: string;
  /** REDIS_URL for the service: `redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/name`. */
  url: string;
  sentinelPorts: number[];
  /** The primary's port as each sentinel reports it (undefined where a sentinel does not answer). */
  reportedPrimaries: () => Promise<(number | undefined)[]>;
  /** Resolves once every sentinel agrees on the primary and sees the other sentinels and an in-sync replica. */
  waitForHealthy: () => Promise<true>;
  /** A planned failover (SENTINEL FAILOVER): the primary, still running, is demoted to a replica; resolves with its port. */
  switchover: () => Promise<number>;
  /** Kills the current primary with SIGKILL, as a crash would; resolves with its port once it is gone. */
  killPrimary: () => Promise<number>;
  /** Waits until every sentinel reports a primary other than `oldPort`; resolves with its port. */
  waitForFailover: (oldPort: number, timeoutMs?: number) => Promise<number>;
  /** Stops every process and removes the folders; safe to call twice, and after a failed start. */
  stop: () => Promise<void>;
}

const GROUP = 'plantstore';
const DOWN_AFTER_MS = 1000;
const FAILOVER_TIMEOUT_MS = 3000;

interface Node {
  role: 'redis' | 'sentinel';
  port: number;
  child: ChildProcess;
  exited: Promise<void>;
}

/** `redis-sentinel`, or `redis-server --sentinel` (the same program) where only the server is installed. */
export function sentinelCommand(): { command: string; args: string[] } | undefined {
  const has = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  if (!has('redis-server')) return undefined;
  return has('redis-sentinel')
    ? { command: 'redis-sentinel', args: [] }
    : { command: 'redis-server', args: ['--sentinel'] };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One command on a short-lived connection that never retries, so a dead node (its port refused)
 * answers "no" at once. A live one is given its time: on a machine busy with other tests a
 * sentinel's answer to SENTINEL FAILOVER has taken over a second.
 */
async function ask<T>(port: number, ...args: (string | number)[]): Promise<T> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
    commandTimeout: 5000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.call(String(args[0]), ...args.slice(1))) as T;
  } finally {
    client.disconnect();
  }
}

/** SENTINEL MASTER's flat [field, value, ...] reply as an object. */
const fields = (reply: string[]): Record<string, string> =>
  Object.fromEntries(Array.from({ length: reply.length / 2 }, (_, i) => [reply[2 * i], reply[2 * i + 1]]));

export async function startSentinelRig(timeoutMs = 30_000): Promise<SentinelRig> {
  const sentinel = sentinelCommand();
  if (!sentinel) throw new Error('redis-server is not installed (apt-get install redis-server redis-sentinel)');
  const root = mkdtempSync(join(tmpdir(), 'plant-store-sentinel-'));
  const nodes: Node[] = [];
  let stopped = false;

  const start = (role: Node['role'], port: number, command: string, args: string[]): Node => {
    const child = spawn(command, args, { cwd: root, stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    const node = { role, port, child, exited };
    nodes.push(node);
    return node;
  };
  const kill = (node: Node, signal: NodeJS.Signals = 'SIGKILL') => {
    if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill(signal);
  };
  // Should jest end the process without afterAll, no server outlives it.
  const onExit = () => nodes.forEach((node) => kill(node));
  process.once('exit', onExit);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    nodes.forEach((node) => kill(node));
    await Promise.all(nodes.map((node) => node.exited));
    rmSync(root, { recursive: true, force: true });
  };

  const redisArgs = (port: number) => {
    const dir = mkdtempSync(join(root, `redis-${port}-`));
    return [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--logfile',
      join(root, `redis-${port}.log`),
    ];
  };

  try {
    const [primaryPort, replicaPort, ...sentinelPorts] = await Promise.all(Array.from({ length: 5 }, freePort));
    start('redis', primaryPort, 'redis-server', redisArgs(primaryPort));
    start('redis', replicaPort, 'redis-server', [
      ...redisArgs(replicaPort),
      '--replicaof',
      '127.0.0.1',
      String(primaryPort),
    ]);
    await until(
      'the replica to be in sync',
      async () => {
        const info = await ask<string>(replicaPort, 'INFO', 'replication');
        return /master_link_status:up/.test(info) ? true : undefined;
      },
      timeoutMs,
    );

    for (const port of sentinelPorts) {
      const dir = mkdtempSync(join(root, `sentinel-${port}-`));
      // Sentinel rewrites its configuration file as it learns the deployment: one file each.
      const conf = join(dir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `logfile ${join(root, `sentinel-${port}.log`)}`,
          `sentinel monitor ${GROUP} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${GROUP} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${GROUP} ${FAILOVER_TIMEOUT_MS}`,
          `sentinel parallel-syncs ${GROUP} 1`,
          '',
        ].join('\n'),
      );
      start('sentinel', port, sentinel.command, [conf, ...sentinel.args]);
    }
    const reportedPrimaries = () =>
      Promise.all(
        sentinelPorts.map((port) =>
          ask<string[] | null>(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', GROUP).then(
            (addr) => (addr ? Number(addr[1]) : undefined),
            () => undefined,
          ),
        ),
      );
    // A failover needs every sentinel to agree on the primary, know the others, and see a replica
    // that is in sync (they learn it all within a few seconds).
    const waitForHealthy = (waitMs = timeoutMs) =>
      until(
        'the sentinels to agree on the primary and see a healthy replica and each other',
        async () => {
          const primaries = await reportedPrimaries();
          if (primaries.some((port) => port === undefined || port !== primaries[0])) return undefined;
          for (const port of sentinelPorts) {
            const view = fields(await ask<string[]>(port, 'SENTINEL', 'MASTER', GROUP));
            if (view['num-slaves'] !== '1' || view['num-other-sentinels'] !== '2' || view.flags !== 'master')
              return undefined;
            const [replica] = (await ask<string[][]>(port, 'SENTINEL', 'REPLICAS', GROUP)).map(fields);
            if (replica.flags !== 'slave' || replica['master-link-status'] !== 'ok') return undefined;
          }
          return true;
        },
        waitMs,
      );
    await waitForHealthy();

    return {
      name: GROUP,
      url: `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',')}/${GROUP}`,
      sentinelPorts,
      reportedPrimaries,
      waitForHealthy: () => waitForHealthy(),
      switchover: async () => {
        const [port] = await reportedPrimaries();
        await ask(sentinelPorts[0], 'SENTINEL', 'FAILOVER', GROUP);
        return port as number;
      },
      killPrimary: async () => {
        const [port] = await reportedPrimaries();
        const node = nodes.find((candidate) => candidate.role === 'redis' && candidate.port === port);
        if (!node) throw new Error(`no running Redis on the reported primary port ${port}`);
        kill(node);
        await node.exited;
        return node.port;
      },
      waitForFailover: (oldPort, waitMs = timeoutMs) =>
        until(
          'a sentinel-elected new primary',
          async () => {
            const ports = await reportedPrimaries();
            const [first] = ports;
            return first !== undefined && first !== oldPort && ports.every((port) => port === first)
              ? first
              : undefined;
          },
          waitMs,
        ),
      stop,
    };
  } catch (error) {
    // What the servers said is the clue to a failed start; they are removed with their folder.
    const logs = readdirSync(root)
      .filter((file) => file.endsWith('.log'))
      .map((file) => `--- ${file}\n${readFileSync(join(root, file), 'utf8').split('\n').slice(-15).join('\n')}`);
    await stop();
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`, { cause: error });
  }
}
