/**
 * Variants of the service against each other: the same list and create loads on each, rounds
 * alternating their order, and every figure taken as a ratio to the first variant within its round
 * (lib/side-by-side.ts).
 *
 * A variant is a built tree (`dist/`, `node_modules/`, `package.json`) started as `npm run
 * start:prod` starts it, on a Node.js binary of its own if given, with environment of its own: an
 * older commit, another Node.js line, a build without a patch, another setting. They run side by
 * side, pinned to CPU 0 where taskset works (load and database on CPU 1); only one is loaded at a
 * time, or, with BENCH_TOGETHER=1, all at once with the connections split among them: then they
 * share the core at the same moments, and their CPU per request compares them even on a machine
 * whose speed drifts from one second to the next (as shared virtual machines' do).
 *
 * Each variant loads as an owner of its own (`bench-variant-1`, ...) with a token of its own, issued
 * by its tree's command line, and 1,000 plants seeded for the list. The variants share the database
 * of BENCH_DATABASE_URL unless one names its own on the same server: the same build on a schema
 * changed by hand. Every database named is dropped and created anew, migrated by the first variant
 * started on it, and dropped at the end. Every variant runs with the same webhook settings (a signing
 * key, http and private addresses allowed), so a subscription is the only difference one makes.
 *
 *   BENCH_VARIANTS=variants.json npm run bench:variants
 *
 * variants.json: `[{ "name": "...", "root": "/path/to/tree", "node": "/path/to/bin/node",
 * "nodeFlags": ["--flag"], "env": { "LOG_LEVEL": "info" }, "database": "plantstore_bench_x",
 * "afterMigrations": ["DROP TRIGGER IF EXISTS t"], "subscribed": true }, ...]`; only name and root
 * are required.
 * - root: relative to the file's folder; `${NAME}` in it (and in node) is taken from the environment.
 * - node: the Node.js running the benchmark unless given; nodeFlags: those of the tree's `start:prod`.
 * - database: its own database on BENCH_DATABASE_URL's server (the name must contain `bench`).
 * - afterMigrations: SQL run on the variant's database once the variant is up (the migrations ran),
 *   before any load; on a database shared with other variants it changes theirs too.
 * - subscribed: its owner has one webhook subscription (plant.created and plant.deleted), made
 *   through its API, to a receiver in this process on 127.0.0.1 that answers 204. Such a variant
 *   needs a database of its own: every instance on a database delivers the events recorded in it.
 *
 * Settings: BENCH_ROUNDS (5), BENCH_DURATION (8 s), BENCH_WARMUP (3 s), BENCH_CONNECTIONS (32),
 * BENCH_WORKLOADS (list,create), BENCH_DATABASE_URL, BENCH_PORT_BASE (3341), BENCH_REPORT
 * (bench/.out/variants.md), BENCH_TOGETHER.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { DbTarget, parseDbUrl, recreateDatabase, seedRange } from './lib/db';
import { integer, seconds } from './lib/env';
import {
  LIST_PATH,
  Measured,
  OUT,
  Standalone,
  createLoad,
  finishStandalone,
  issueToken,
  listLoad,
  log,
  measureLoad,
  prepareStandalone,
  runMain,
  serviceEnvironment,
  startProd,
} from './lib/harness';
import {
  Round,
  connectionsPerSide,
  median,
  ratioPerRound,
  ratioSummary,
  runSideBySide,
  togetherRequested,
} from './lib/side-by-side';
import { Spawned, cpuSeconds, sleep, startProcess, stopProcess, waitForHttp } from './lib/sys';
import { Receiver, startReceiver, subscribe, webhookEnvironment } from './lib/webhooks';

interface Variant {
  name: string;
  root: string;
  node?: string;
  nodeFlags?: string[];
  env?: Record<string, string>;
  database?: string;
  afterMigrations?: string[];
  subscribed?: boolean;
}

/** A variant as it runs: where it listens, its database and environment, the owner it loads as. */
interface Placed {
  variant: Variant;
  port: number;
  db: DbTarget;
  serviceEnv: NodeJS.ProcessEnv;
  owner: string;
  /** Issued once the variant's database is migrated. */
  token: string;
}

type Workload = 'list' | 'create';

const env = process.env;
const S = {
  spec: env.BENCH_VARIANTS ?? '',
  rounds: integer(env.BENCH_ROUNDS, 5),
  durationSec: seconds(env.BENCH_DURATION, 8),
  warmupSec: seconds(env.BENCH_WARMUP, 3),
  connections: integer(env.BENCH_CONNECTIONS, 32),
  workloads: (env.BENCH_WORKLOADS || 'list,create').split(',').map((w) => w.trim()) as Workload[],
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_variants',
  portBase: integer(env.BENCH_PORT_BASE, 3341),
  report: env.BENCH_REPORT || join(OUT, 'variants.md'),
  together: togetherRequested(env),
};
/** Each variant creates its own ids, from 2^53 up (where a double could not hold them). */
const createBase = (index: number) => 2n ** 53n + BigInt(index) * 10n ** 12n;

function readVariants(): Variant[] {
  if (!S.spec) throw new Error('BENCH_VARIANTS names no file (see the head of bench/variants.ts)');
  const variants = JSON.parse(readFileSync(S.spec, 'utf8')) as Variant[];
  if (!Array.isArray(variants) || variants.length < 2) throw new Error(`${S.spec}: at least two variants`);
  for (const v of variants) {
    const statements = v.afterMigrations ?? [];
    if (!Array.isArray(statements) || statements.some((q) => typeof q !== 'string'))
      throw new Error(`${S.spec}: ${v.name}: afterMigrations must be a list of SQL statements`);
    if (v.subscribed !== undefined && typeof v.subscribed !== 'boolean')
      throw new Error(`${S.spec}: ${v.name}: subscribed must be true or false`);
  }
  // Every instance on a database claims and delivers its pending events, whoever recorded them.
  const databaseOf = (v: Variant) => v.database ?? parseDbUrl(S.databaseUrl).database;
  for (const v of variants.filter((s) => s.subscribed))
    if (variants.some((o) => o !== v && databaseOf(o) === databaseOf(v)))
      throw new Error(`${S.spec}: ${v.name}: a subscribed variant needs a database no other variant uses`);
  const base = dirname(resolve(S.spec));
  return variants.map((v) => ({ ...v, root: resolve(base, expand(v.root)), node: v.node && expand(v.node) }));
}

/** `${NAME}` replaced by the environment's NAME, so that a list kept in the repository names no machine's paths. */
function expand(path: string): string {
  return path.replace(/\$\{(\w+)\}/g, (_, name: string) => {
    const value = env[name];
    if (!value) throw new Error(`${S.spec}: ${path} names \${${name}}, which the environment does not set`);
    return value;
  });
}

/** `node <flags> dist/main.js` as the tree's `start:prod` says, on the variant's Node.js. */
function commandOf(variant: Variant): string[] {
  const { nodeFlags, script } = startProd(variant.root, variant.nodeFlags);
  return [variant.node ?? process.execPath, ...nodeFlags, script];
}

/**
 * Where each variant runs: on the benchmark's database or the one it names on the same server
 * (created anew here), with the environment every variant shares and its own on top.
 */
async function placeVariants(variants: Variant[], bench: Standalone): Promise<Placed[]> {
  const shared = { ...webhookEnvironment(), LOG_LEVEL: 'warn' };
  const databases = new Map<string, DbTarget>([[bench.db.database, bench.db]]);
  for (const name of new Set(variants.map((v) => v.database ?? bench.db.database))) {
    if (databases.has(name)) continue;
    const url = new URL(S.databaseUrl);
    url.pathname = `/${name}`;
    databases.set(name, parseDbUrl(url.toString()));
    await recreateDatabase(bench.conn, name);
  }
  return variants.map((variant, i) => {
    const db = databases.get(variant.database ?? bench.db.database)!;
    const port = S.portBase + i;
    const serviceEnv = { ...serviceEnvironment(db, bench.version), ...shared, ...variant.env, PORT: String(port) };
    return { variant, port, db, serviceEnv, owner: `bench-variant-${i + 1}`, token: '' };
  });
}

/** Points the benchmark's connection at a variant's database: the seeding and statements name no schema. */
async function useDatabase(conn: Connection, db: DbTarget): Promise<void> {
  await conn.query(`USE \`${db.database}\``);
}

/**
 * Waits (up to 10 s) until the variants together use under a tenth of a core: the one loaded last
 * goes on collecting garbage after its load, on the core the next one is measured on.
 */
async function settle(procs: Spawned[]): Promise<void> {
  const busy = () => procs.reduce((sum, proc) => sum + (cpuSeconds(proc.pid) || 0), 0);
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const before = busy();
    await sleep(500);
    if ((busy() - before) / 0.5 < 0.1) return;
  }
}

/**
 * Starts every variant one after the other (the first on a database runs its migrations alone),
 * pinned to CPU 0 when possible, and runs each one's statements once it is up.
 */
async function startVariants(placed: Placed[], bench: Standalone, procs: Spawned[]): Promise<void> {
  for (const [i, { variant, port, db, serviceEnv }] of placed.entries()) {
    const proc = startProcess(`${variant.name}`, commandOf(variant), {
      env: serviceEnv,
      cwd: variant.root,
      cpus: bench.serviceCpus,
      logPath: join(dirname(S.report), `variant-${i}.log`),
    });
    procs.push(proc);
    await waitForHttp(`http://127.0.0.1:${port}/health/live`, proc);
    if (variant.afterMigrations?.length) {
      log(`${variant.name}: ${variant.afterMigrations.length} statement(s) on ${db.database}`);
      await useDatabase(bench.conn, db);
      for (const statement of variant.afterMigrations) await bench.conn.query(statement);
    }
  }
}

/** Each variant's owner: a token from its tree, 1,000 plants, and its subscription if it has one. */
async function prepareOwners(placed: Placed[], conn: Connection, receiver: Receiver | undefined): Promise<void> {
  for (const p of placed) {
    p.token = await issueToken(p.variant.root, p.serviceEnv, p.owner, commandOf(p.variant)[0]);
    await useDatabase(conn, p.db);
    await seedRange(conn, p.owner, 1n, 1000);
    if (p.variant.subscribed) await subscribe(p.port, p.token, receiver!.url);
  }
}

/** Each variant under the list of its 1,000-plant owner, or creates of fresh ids of its own. */
function compareVariants(placed: Placed[], procs: Spawned[]): Promise<Round<Workload, Measured>[]> {
  const connections = connectionsPerSide(S.connections, placed.length, S.together);
  const load = (i: number, workload: Workload, sec: number, conns: number) =>
    workload === 'list'
      ? listLoad(placed[i].port, placed[i].token, sec, conns)
      : createLoad(placed[i].port, placed[i].token, sec, conns, next[i]);
  const next = placed.map((_, i) => ({ next: createBase(i) }));
  log(`warm-up: ${S.warmupSec} s per variant and workload`);
  return runSideBySide<Workload, Measured>({
    sides: placed.map(({ variant }, i) => ({
      name: variant.name,
      warm: async (workload) => void (await load(i, workload, S.warmupSec, S.connections)),
      measure: (workload) => measureLoad(procs[i].pid, () => load(i, workload, S.durationSec, connections)),
    })),
    workloads: S.workloads,
    rounds: S.rounds,
    together: S.together,
    beforeRun: () => settle(procs),
    onRound: (round, measured) => {
      for (const workload of S.workloads)
        log(
          `round ${round + 1}/${S.rounds} ${workload}: ` +
            placed.map((p, i) => `${p.variant.name} ${measured[workload][i].rps.toFixed(0)} req/s`).join(', '),
        );
    },
  });
}
function report(variants: Variant[], rounds: Round<Workload, Measured>[], settings: string): string {
  const lines: string[] = [];
  const first = variants[0].name;
  for (const workload of S.workloads) {
    const runs = rounds.map((r) => r[workload]);
    lines.push(
      `### ${workload}`,
      '',
      `| variant | req/s | p99 ms | CPU µs/request | max RSS MB | req/s ÷ ${first}, per round | requests per CPU-second ÷ ${first} | p99 ÷ ${first} |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const [i, variant] of variants.entries()) {
      const of = (pick: (m: Measured) => number) => runs.map((r) => pick(r[i]));
      const ratio = (pick: (m: Measured) => number) => ratioPerRound(runs, i, pick);
      lines.push(
        `| ${variant.name} | ${median(of((m) => m.rps)).toFixed(0)} | ${median(of((m) => m.p99Ms)).toFixed(1)} | ` +
          `${median(of((m) => m.cpuUsPerRequest)).toFixed(0)} | ${Math.max(...of((m) => m.maxRssMb)).toFixed(0)} | ` +
          `${ratioSummary(ratio((m) => m.rps))} | ${ratioSummary(ratio((m) => 1 / m.cpuUsPerRequest))} | ` +
          `${median(ratio((m) => m.p99Ms)).toFixed(2)} |`,
      );
    }
    lines.push('');
  }
  lines.push(settings);
  return lines.join('\n');
}

/** What a variant is, as its settings say: command, tree, environment, database, subscription. */
function describe({ variant: v, db }: Placed, bench: Standalone): string {
  return (
    `${v.name} = \`${commandOf(v).join(' ')}\` in ${v.root}${v.env ? ` with ${JSON.stringify(v.env)}` : ''}` +
    (db.database !== bench.db.database ? `, on its own database ${db.database}` : '') +
    (v.afterMigrations?.length ? ` after \`${v.afterMigrations.join('; ')}\`` : '') +
    (v.subscribed ? ', its owner subscribed' : '')
  );
}

function settingsLine(placed: Placed[], bench: Standalone, delivered: number | undefined): string {
  return (
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per variant and workload after ${S.warmupSec} s of warm-up, ` +
    `${S.together ? `the variants loaded at once, ${S.connections} connections split among them` : `one variant at a time, ${S.connections} connections`}, list = \`GET ${LIST_PATH}\` of an owner of 1,000 plants, create = \`POST /plants\` of fresh ids, ` +
    `each variant as an owner of its own, LOG_LEVEL=warn unless a variant sets it, webhook signing key set and http to 127.0.0.1 allowed for every variant, ` +
    `${bench.version}, ${bench.pin ? 'the variants on CPU 0, load and database on CPU 1' : 'not pinned'}. ` +
    `Variants: ${placed.map((p) => describe(p, bench)).join('; ')}.` +
    (delivered === undefined
      ? ''
      : ` The receiver (in the load process, answering 204) got ${delivered} deliveries while the variants ran.`)
  );
}

async function main(): Promise<void> {
  const variants = readVariants();
  mkdirSync(dirname(S.report), { recursive: true });
  // The variants are built trees: nothing to build here.
  const bench = await prepareStandalone({ databaseUrl: S.databaseUrl, skipBuild: true });
  const receiver = variants.some((v) => v.subscribed) ? await startReceiver() : undefined;
  const placed = await placeVariants(variants, bench);
  const procs: Spawned[] = [];
  let rounds: Round<Workload, Measured>[];
  try {
    await startVariants(placed, bench, procs);
    await prepareOwners(placed, bench.conn, receiver);
    rounds = await compareVariants(placed, procs);
  } finally {
    for (const proc of procs) await stopProcess(proc);
    receiver?.server.close();
  }
  for (const database of new Set(placed.map((p) => p.db.database)))
    if (database !== bench.db.database) await bench.conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
  const settings = settingsLine(placed, bench, receiver?.received());
  await finishStandalone(bench, S.report, report(variants, rounds, settings));
}

runMain(main);
