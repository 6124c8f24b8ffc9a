/**
 * What every benchmark driver shares: the service's command line and environment, the list and
 * create loads with the figures of one measured run, a fresh database, tokens, and for the
 * benchmarks that answer one question (log-line.ts, jwt-list.ts, ...) their start and their report.
 */
import autocannon from 'autocannon';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { DbTarget, connectServer, parseDbUrl, recreateDatabase, withScheme } from './db';
import { integer, seconds } from './env';
import { Round, ratioPerRound, runSideBySide } from './side-by-side';
import { canPin, cpuSeconds, initClockTicks, run, sampleRss, setAffinity } from './sys';

export const ROOT = process.cwd();
export const OUT = join(ROOT, 'bench', '.out');
export const LIST_PATH = '/plants?limit=20';
/** RATE_LIMIT_PER_MINUTE of an instance under load: every request is counted, none refused. */
export const RATE_LIMIT_NEVER_REACHED = '1000000000';

export const log = (message: string) =>
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/**
 * The command line of a tree's `npm run start:prod` (the Dockerfile's CMD), `node <flags> <script>`,
 * or with `nodeFlags` in place of its flags.
 */
export function startProd(root: string, nodeFlags?: string[]): { nodeFlags: string[]; script: string } {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts['start:prod'];
  const words = script.trim().split(/\s+/);
  if (words[0] !== 'node' || words.length < 2 || words.slice(1, -1).some((word) => !word.startsWith('-'))) {
    throw new Error(`${root}: npm run start:prod is not "node [flags] <script>": ${script}`);
  }
  return { nodeFlags: nodeFlags ?? words.slice(1, -1), script: words[words.length - 1] };
}

/** `npm run start:prod` of this tree as an argv, on the Node.js that runs the benchmark. */
export function startProdArgv(root: string): string[] {
  const { nodeFlags, script } = startProd(root);
  return [process.execPath, ...nodeFlags, script];
}

/**
 * The environment of an instance these benchmarks start: production, on the benchmark database
 * (`mariadb://` for a MariaDB server), no rate limit or metrics listener in the way. Each adds its
 * own LOG_LEVEL and PORT.
 */
export function serviceEnvironment(db: DbTarget, serverVersion: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: withScheme(db, /mariadb/i.test(serverVersion) ? 'mariadb' : 'mysql'),
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: RATE_LIMIT_NEVER_REACHED,
    METRICS_PORT: '0',
  };
}

/** A load refused for any answer but 2xx, or any error. */
function checked(label: string, result: autocannon.Result): autocannon.Result {
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

/** The list load: `GET /plants?limit=20` with one token, for `seconds`. */
export async function listLoad(
  port: number,
  token: string,
  seconds: number,
  connections: number,
): Promise<autocannon.Result> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${LIST_PATH}`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
  });
  return checked(`list on :${port}`, result);
}

/** Plants created by the standalone benchmarks unless one names its own: a name and a tag. */
export const BENCH_PLANT = '"name":"bench plant","tag":"bench"';

/** The create load: `POST /plants` with ids counting up from `ids.next`, for `seconds`. */
export async function createLoad(
  port: number,
  token: string,
  seconds: number,
  connections: number,
  ids: { next: bigint },
  fields = BENCH_PLANT,
): Promise<autocannon.Result> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/plants`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: `{"id":${ids.next++},${fields}}` }),
      },
    ],
  });
  return checked(`create on :${port}`, result);
}

/** The figures of one measured run of one instance. */
export interface Measured {
  rps: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  maxRssMb: number;
  /** Responses read in time. */
  requests: number;
}

/**
 * One workload in two or more forms on one running instance (owners, tokens), side by side: each
 * round measures them one after the other in alternating order; the round's line gives each one's
 * throughput and CPU per request and the ratio of the last to the first.
 */
export function compareOnOneInstance<K extends string, W extends string>(plan: {
  kinds: readonly K[];
  workload: W;
  pid: number;
  rounds: number;
  warmupSec: number;
  durationSec: number;
  load: (kind: K, seconds: number) => Promise<autocannon.Result>;
}): Promise<Round<W, Measured>[]> {
  log(`warm-up: ${plan.warmupSec} s per ${plan.kinds.join(' and ')}`);
  const line = (kind: K, m: Measured) =>
    `${kind} ${m.rps.toFixed(0)} req/s (${m.cpuUsPerRequest.toFixed(1)} µs CPU/req)`;
  return runSideBySide<W, Measured>({
    sides: plan.kinds.map((kind) => ({
      name: kind,
      warm: async () => void (await plan.load(kind, plan.warmupSec)),
      measure: () => measureLoad(plan.pid, () => plan.load(kind, plan.durationSec)),
    })),
    workloads: [plan.workload],
    rounds: plan.rounds,
    onRound: (round, measured) => {
      const runs = measured[plan.workload];
      const [first, last] = [runs[0], runs[runs.length - 1]];
      log(
        `round ${round + 1}/${plan.rounds}: ${runs.map((m, i) => line(plan.kinds[i], m)).join(', ')}: ` +
          `${plan.kinds[runs.length - 1]} ÷ ${plan.kinds[0]} ${(last.rps / first.rps).toFixed(3)}`,
      );
    },
  });
}

/**
 * compareOnOneInstance's rounds of two kinds as a table, a row per round with the second kind's
 * ratios to the first (throughput, requests per CPU-second); the ratios too, for the summary line.
 */
export function pairRounds(
  runs: Measured[][],
  [first, second]: readonly [string, string],
): { table: string[]; rps: number[]; cpu: number[] } {
  const rps = ratioPerRound(runs, 1, (m) => m.rps);
  const cpu = ratioPerRound(runs, 1, (m) => 1 / m.cpuUsPerRequest);
  const cells = (m: Measured) => `${m.rps.toFixed(0)} | ${m.cpuUsPerRequest.toFixed(1)}`;
  return {
    table: [
      `| round | ${first} req/s | ${first} CPU µs/req | ${second} req/s | ${second} CPU µs/req | ${second} ÷ ${first}, req/s | ${second} ÷ ${first}, requests per CPU-second |`,
      '|---:|---:|---:|---:|---:|---:|---:|',
      ...runs.map(
        (r, i) => `| ${i + 1} | ${cells(r[0])} | ${cells(r[1])} | ${rps[i].toFixed(3)} | ${cpu[i].toFixed(3)} |`,
      ),
    ],
    rps,
    cpu,
  };
}

/**
 * Runs `load` and reads the instance `pid`'s CPU time (all its threads) and resident memory
 * meanwhile; `settle` runs before the CPU time is read again (e.g. for lines still being written).
 */
export async function measureLoad(
  pid: number,
  load: () => Promise<autocannon.Result>,
  settle?: () => Promise<void>,
): Promise<Measured> {
  const cpu0 = cpuSeconds(pid);
  const rss = sampleRss(pid);
  const result = await load();
  const maxRssMb = rss.stop();
  await settle?.();
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p99Ms: result.latency.p99,
    cpuUsPerRequest: ((cpuSeconds(pid) - cpu0) * 1e6) / requests,
    maxRssMb,
    requests,
  };
}

/** The benchmark's own database, dropped and created anew, and the server's version. */
export async function freshBenchDatabase(url: string): Promise<{ db: DbTarget; conn: Connection; version: string }> {
  const db = parseDbUrl(url);
  if (!db.database.includes('bench')) throw new Error('BENCH_DATABASE_URL must name a database containing "bench"');
  const conn = await connectServer(db);
  const [[{ version }]] = (await conn.query('SELECT VERSION() AS version')) as unknown as [[{ version: string }]];
  await recreateDatabase(conn, db.database);
  return { db, conn, version };
}

/** A `pst_` token for `user`, issued with the tree's command line against the service's database. */
export async function issueToken(
  root: string,
  serviceEnv: NodeJS.ProcessEnv,
  user: string,
  node = process.execPath,
): Promise<string> {
  const { stdout } = await run(node, ['dist/cli.js', 'token', 'create', '--user', user], {
    cwd: root,
    env: { ...serviceEnv, LOG_LEVEL: 'error' },
  });
  const token = stdout.trim().split('\n').pop()!.trim();
  if (!token.startsWith('pst_')) throw new Error(`token create printed no token for ${user}:\n${stdout}`);
  return token;
}

/** The settings every standalone benchmark reads, with its own defaults. */
export interface StandaloneSettings {
  databaseUrl: string;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
  portBase: number;
  skipBuild: boolean;
}

export function standaloneSettings(defaults: {
  /** The variable of its rounds (each benchmark has its own, BENCH_ROUNDS being the main run's). */
  roundsVariable: string;
  rounds: number;
  durationSec?: number;
  databaseUrl: string;
  portBase: number;
}): StandaloneSettings {
  const env = process.env;
  return {
    databaseUrl: env.BENCH_DATABASE_URL || defaults.databaseUrl,
    rounds: integer(env[defaults.roundsVariable], defaults.rounds),
    durationSec: seconds(env.BENCH_DURATION, defaults.durationSec ?? 10),
    warmupSec: seconds(env.BENCH_WARMUP, 3),
    connections: integer(env.BENCH_CONNECTIONS, 32),
    portBase: integer(env.BENCH_PORT_BASE, defaults.portBase),
    skipBuild: env.BENCH_SKIP_BUILD === '1',
  };
}

export interface Standalone {
  db: DbTarget;
  conn: Connection;
  version: string;
  /** Whether the instances run on CPU 0 (this process, the load, is on CPU 1 then). */
  pin: boolean;
  /** `cpus` for an instance under test: CPU 0 when pinned. */
  serviceCpus: string | undefined;
}

/** Builds the service unless told not to, re-creates the database, and pins this process to CPU 1. */
export async function prepareStandalone(settings: { databaseUrl: string; skipBuild: boolean }): Promise<Standalone> {
  mkdirSync(OUT, { recursive: true });
  await initClockTicks();
  if (!settings.skipBuild) {
    log('building the service (npm run build)');
    await run('npm', ['run', 'build'], { cwd: ROOT });
  }
  const { db, conn, version } = await freshBenchDatabase(settings.databaseUrl);
  const pin = await canPin();
  if (pin) await setAffinity(process.pid, '1');
  return { db, conn, version, pin, serviceCpus: pin ? '0' : undefined };
}

/** Drops the benchmark's database, then writes the report to `file` and to stdout. */
export async function finishStandalone(bench: Standalone, file: string, report: string): Promise<void> {
  await bench.conn.query(`DROP DATABASE IF EXISTS \`${bench.db.database}\``);
  await bench.conn.end();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${report}\n`);
  process.stdout.write(`${report}\n`);
}

/** The entry point of a benchmark: its stack and exit code 1 on failure. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
