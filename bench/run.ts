/**
 * `npm run bench`: the service against two hand-written peers of the same contract, on MySQL or
 * MariaDB. See bench/README.md for what it measures and how to read bench/RESULTS.md.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import type { LoadJob, LoadResult, Workload } from './loadgen';
import {
  COUNTERS,
  Counters,
  connectServer,
  diffCounters,
  explain,
  measureCounterBaseline,
  ownerName,
  parseDbUrl,
  readCounters,
  recreateDatabase,
  seedRange,
  seedUsers,
  traceStatements,
  withScheme,
} from './lib/db';
import { probeCausalReads, startCluster } from './lib/cluster';
import { runFaultDrill } from './lib/faults';
import { summarizeProfile } from './lib/profile';
import { renderMarkdown, renderSvg, spread } from './lib/report';
import {
  Spawned,
  canPin,
  cpuModel,
  cpuSeconds,
  findDatabasePid,
  getAffinity,
  initClockTicks,
  readMemory,
  run,
  sampleRss,
  setAffinity,
  sleep,
  startProcess,
  systemBusySeconds,
  stopProcess,
  waitForHttp,
} from './lib/sys';
import {
  BenchResults,
  ClusterResult,
  ClusterRound,
  ParityCheck,
  RoundResult,
  ScaleResult,
  ScenarioResult,
  TARGETS,
  TARGET_LABEL,
  TargetName,
  TraceEntry,
} from './lib/types';

// ---------------------------------------------------------------------------------------------
// Settings

const env = process.env;
const QUICK = env.BENCH_QUICK === '1';

function seconds(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new Error(`not a duration: "${text}" (e.g. 10s, 500ms, 1m)`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
}

function integer(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a whole number: "${text}"`);
  return n;
}

const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench',
  rounds: integer(env.BENCH_ROUNDS, QUICK ? 2 : 7),
  durationSec: seconds(env.BENCH_DURATION, QUICK ? 3 : 10),
  warmupSec: seconds(env.BENCH_WARMUP, QUICK ? 1 : 3),
  connections: integer(env.BENCH_CONNECTIONS, 32),
  poolSize: integer(env.BENCH_POOL_SIZE, 10),
  scaleRows: integer(env.BENCH_SCALE_ROWS, QUICK ? 100_000 : 1_000_000),
  scaleRounds: integer(env.BENCH_SCALE_ROUNDS, QUICK ? 1 : 3),
  singleSec: seconds(env.BENCH_SINGLE_DURATION, QUICK ? 2 : 5),
  scenarios: (env.BENCH_SCENARIOS || 'list,create,delete,mix').split(',').map((s) => s.trim()),
  scale: env.BENCH_SCALE !== '0',
  profile: env.BENCH_PROFILE !== '0',
  trace: env.BENCH_TRACE !== '0',
  pin: env.BENCH_PIN !== '0',
  quiet: env.BENCH_QUIET !== '0',
  quietThreshold: Number(env.BENCH_QUIET_THRESHOLD || 0.15),
  quietMaxWaitSec: seconds(env.BENCH_QUIET_MAX_WAIT, 120),
  quietBudgetSec: seconds(env.BENCH_QUIET_BUDGET, 600),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
  logLevel: env.BENCH_LOG_LEVEL || 'warn',
  keepDatabase: env.BENCH_KEEP_DATABASE === '1',
  portBase: integer(env.BENCH_PORT_BASE, 3101),
  peerTokenTtlMs: integer(env.BENCH_PEER_TOKEN_TTL_MS, 5000),
  clusterPortBase: integer(env.BENCH_CLUSTER_PORT_BASE, 14700),
  causalStatements: integer(env.BENCH_CAUSAL_STATEMENTS, QUICK ? 500 : 3000),
  faultRounds: integer(env.BENCH_FAULT_ROUNDS, QUICK ? 1 : 3),
};

const ROOT = process.cwd();
const HERE = __dirname; // the compiled bench code
const OUT = join(ROOT, 'bench', '.out');
const PLANTS_PER_USER = 1000;
const LIST_PATH = '/plants?limit=20';
/** Ids of created plants start beyond 2^53, where a double could not hold them. */
const CREATE_BASE = 2n ** 53n;
/** Ids seeded for deletes start here, far from the 1..1000 that lists read. */
const POOL_BASE = 10n ** 12n;

const log = (message: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/**
 * The service runs as it ships: the command line of `npm run start:prod` (the Dockerfile's CMD),
 * `node <flags> dist/main.js`. Its Node flags are the runtime's, not the framework's, so the peers
 * run with them too: the distance between the targets stays what the code costs.
 */
function startProdCommand(): { nodeFlags: string[]; script: string } {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts['start:prod'];
  const words = script.trim().split(/\s+/);
  if (words[0] !== 'node' || words.length < 2 || words.slice(1, -1).some((word) => !word.startsWith('-'))) {
    throw new Error(`npm run start:prod is not "node [flags] <script>": ${script}`);
  }
  // BENCH_NODE_FLAGS replaces the flags for every target, to measure what a runtime flag is worth.
  const override = process.env.BENCH_NODE_FLAGS;
  const nodeFlags = override === undefined ? words.slice(1, -1) : override.split(/\s+/).filter(Boolean);
  return { nodeFlags, script: words[words.length - 1] };
}
const START_PROD = startProdCommand();

/**
 * Sections of RESULTS.md between `<!-- recorded -->` and `<!-- /recorded -->` hold measurements made
 * by other runs (another Node.js line, a flag turned off); a new run keeps them, at the end.
 */
function keepRecordedSections(file: string, report: string): string {
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const kept = previous.match(/<!-- recorded -->[\s\S]*?<!-- \/recorded -->/g) ?? [];
  return kept.length === 0 ? report : `${report.trimEnd()}\n\n${kept.join('\n\n')}\n`;
}

/** A token for `user`, issued by the service's own command line against the database of `serviceEnv`. */
async function createToken(serviceEnv: NodeJS.ProcessEnv, user: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['dist/cli.js', 'token', 'create', '--user', user, '--name', 'bench'],
    {
      cwd: ROOT,
      env: { ...serviceEnv, LOG_LEVEL: 'error' },
    },
  );
  const secret = stdout.trim().split('\n').pop()?.trim() ?? '';
  if (!/^pst_/.test(secret)) throw new Error(`token create printed no token for ${user}:\n${stdout}`);
  return secret;
}

// ---------------------------------------------------------------------------------------------
// The load generator, a child process spoken to over IPC

class LoadGenerator {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  constructor(readonly proc: Spawned) {
    proc.child.on('message', (message: { seq: number; result?: LoadResult; error?: string }) => {
      const waiter = this.pending.get(message.seq);
      this.pending.delete(message.seq);
      if (message.error || !message.result) waiter?.reject(new Error(`load generator: ${message.error}`));
      else waiter?.resolve(message.result);
    });
    void proc.exited.then((code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
  }

  run(job: LoadJob): Promise<LoadResult> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.proc.child.send({ seq, job });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// State of one run

interface Target {
  name: TargetName;
  proc: Spawned;
  url: string;
}

interface Context {
  conn: Connection;
  targets: Target[];
  loadgen: LoadGenerator;
  tokens: Record<string, string>;
  dbPid: number | null;
  baseline: { selfCost: Counters; idleNoisePerSec: Counters };
  /** Next id to create, per owner. */
  createNext: Map<string, bigint>;
  /** Seeded ids waiting to be deleted, per owner: [next, end). */
  pools: Map<string, { next: bigint; end: bigint }>;
  /** Highest throughput seen per target, to size the delete pools. */
  rpsSeen: Map<TargetName, number>;
  /** Measured runs that started although other processes kept the machine busy. */
  busyStarts: number;
  quietWaitSec: number;
  /** Extra processes of the benchmark (the profiled instance of the service). */
  extraPids: Set<number>;
}

/** CPU seconds of every process of the benchmark: targets, load generator, database, this driver. */
function ourCpuSeconds(ctx: Context): number {
  const pids = [
    ...ctx.targets.map((t) => t.proc.pid),
    ...ctx.extraPids,
    ctx.loadgen.proc.pid,
    process.pid,
    ...(ctx.dbPid ? [ctx.dbPid] : []),
  ];
  return pids.reduce((sum, pid) => sum + (cpuSeconds(pid) || 0), 0);
}

/** A reading to compute, later, how many cores processes outside the benchmark used meanwhile. */
function othersMeter(ctx: Context): () => number {
  const busy0 = systemBusySeconds();
  const ours0 = ourCpuSeconds(ctx);
  const t0 = Date.now();
  return () => Math.max(0, (systemBusySeconds() - busy0 - (ourCpuSeconds(ctx) - ours0)) / ((Date.now() - t0) / 1000));
}

/**
 * On a shared machine, waits (up to BENCH_QUIET_MAX_WAIT) until processes outside the benchmark
 * use less than BENCH_QUIET_THRESHOLD cores over a second, so a round does not start in the
 * middle of someone's test run.
 */
async function waitForQuiet(ctx: Context): Promise<void> {
  if (!S.quiet || ctx.quietWaitSec >= S.quietBudgetSec) return;
  const t0 = Date.now();
  let announced = false;
  for (;;) {
    const meter = othersMeter(ctx);
    await sleep(1000);
    const others = meter();
    if (others < S.quietThreshold) break;
    if (!announced) log(`waiting for other processes to quiet down (they use ${(others * 100).toFixed(0)}% of a core)`);
    announced = true;
    if (Date.now() - t0 > S.quietMaxWaitSec * 1000 || ctx.quietWaitSec + (Date.now() - t0) / 1000 >= S.quietBudgetSec) {
      log(`still busy after ${S.quietMaxWaitSec}s: measuring anyway`);
      ctx.busyStarts++;
      break;
    }
  }
  ctx.quietWaitSec += (Date.now() - t0) / 1000;
}

const orderFor = (round: number): TargetName[] => (round % 2 === 1 ? [...TARGETS] : [...TARGETS].reverse());

async function ensurePool(ctx: Context, owner: string, needed: number): Promise<void> {
  const pool = ctx.pools.get(owner) ?? { next: POOL_BASE, end: POOL_BASE };
  ctx.pools.set(owner, pool);
  let missing = needed - Number(pool.end - pool.next);
  if (missing <= 0) return;
  missing += 1000;
  while (missing > 0) {
    const batch = Math.min(missing, 999_999);
    await seedRange(ctx.conn, owner, pool.end, batch);
    pool.end += BigInt(batch);
    missing -= batch;
  }
  await sleep(500); // let the server settle after the bulk insert
}

/** How many deletes a target may issue in `sec` seconds at `share` of its requests, generously. */
function deleteBudget(ctx: Context, target: TargetName, sec: number, share: number): number {
  const rps = ctx.rpsSeen.get(target) ?? 20_000;
  return share === 0 ? 0 : Math.ceil(rps * 1.6 * sec * share) + S.connections * 4;
}

interface ScenarioSpec {
  name: string;
  title: string;
  description: string;
  user: string;
  /** Deletes per request, to size the pool of seeded ids. */
  deleteShare: number;
  workload: (ctx: Context) => Workload;
  after: (ctx: Context, result: LoadResult) => void;
}

const SCENARIOS: ScenarioSpec[] = [
  {
    name: 'list',
    title: 'list: GET /plants?limit=20, a user with 1,000 plants',
    description: 'The first page of 20 of a user holding 1,000 plants; one keyset SELECT per request.',
    user: 'bench-list',
    deleteShare: 0,
    workload: () => ({ kind: 'list', path: LIST_PATH }),
    after: () => undefined,
  },
  {
    name: 'create',
    title: 'create: POST /plants with a fresh id each request',
    description: `Each request creates a plant with a new id (counting up from 2^53 = ${CREATE_BASE}, so ids are beyond what a double holds); one INSERT per request.`,
    user: 'bench-create',
    deleteShare: 0,
    workload: (ctx) => ({ kind: 'create', nextId: String(ctx.createNext.get('bench-create') ?? CREATE_BASE) }),
    after: (ctx, r) => ctx.createNext.set('bench-create', BigInt(r.nextCreateId!)),
  },
  {
    name: 'delete',
    title: 'delete: DELETE /plants/{id} of existing plants, in order',
    description:
      'Ids seeded before each round are deleted in order, each once; 204 is a deleted plant, 404 would be an id that was not there. One DELETE per request.',
    user: 'bench-delete',
    deleteShare: 1,
    workload: (ctx) => ({ kind: 'delete', nextId: String(ctx.pools.get('bench-delete')!.next) }),
    after: (ctx, r) => {
      ctx.pools.get('bench-delete')!.next = BigInt(r.nextDeleteId!);
    },
  },
  {
    name: 'mix',
    title: 'mix: 80% list, 15% create, 5% delete',
    description:
      'One user with 1,000 plants; a fixed cycle of 20 requests per connection: 16 lists (limit=20), 3 creates of fresh ids, 1 delete of a seeded id.',
    user: 'bench-mix',
    deleteShare: 0.05,
    workload: (ctx) => ({
      kind: 'mix',
      listPath: LIST_PATH,
      nextCreateId: String(ctx.createNext.get('bench-mix') ?? CREATE_BASE),
      nextDeleteId: String(ctx.pools.get('bench-mix')!.next),
    }),
    after: (ctx, r) => {
      ctx.createNext.set('bench-mix', BigInt(r.nextCreateId!));
      ctx.pools.get('bench-mix')!.next = BigInt(r.nextDeleteId!);
    },
  },
];

// ---------------------------------------------------------------------------------------------
// One measured run of one target

async function measure(ctx: Context, target: Target, round: number, job: LoadJob): Promise<RoundResult> {
  await waitForQuiet(ctx);
  const before = await readCounters(ctx.conn);
  const others = othersMeter(ctx);
  const t0 = Date.now();
  const cpu0 = {
    target: cpuSeconds(target.proc.pid),
    db: ctx.dbPid ? cpuSeconds(ctx.dbPid) : NaN,
    loadgen: cpuSeconds(ctx.loadgen.proc.pid),
  };
  const rss = sampleRss(target.proc.pid);
  const load = await ctx.loadgen.run(job);
  const rssMaxMb = rss.stop();
  const wall = (Date.now() - t0) / 1000;
  const cpu = {
    target: (cpuSeconds(target.proc.pid) - cpu0.target) / wall,
    db: ctx.dbPid ? (cpuSeconds(ctx.dbPid) - cpu0.db) / wall : null,
    loadgen: (cpuSeconds(ctx.loadgen.proc.pid) - cpu0.loadgen) / wall,
    others: others(),
  };
  await sleep(300); // requests still in flight when the load stopped reach the database
  const after = await readCounters(ctx.conn);
  const sql = diffCounters(after, before, ctx.baseline.selfCost);
  const sqlPerRequest = Object.fromEntries(
    COUNTERS.map((c) => [c, sql[c] / Math.max(1, load.sent)]),
  ) as RoundResult['sqlPerRequest'];
  ctx.rpsSeen.set(target.name, Math.max(ctx.rpsSeen.get(target.name) ?? 0, load.rps));
  return { round, target: target.name, load, sql, sqlPerRequest, rssMaxMb, cpu };
}

function describe(r: RoundResult): string {
  const l = r.load.latencyMs;
  const statuses = Object.entries(r.load.status)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
  return (
    `${TARGET_LABEL[r.target].padEnd(22)} ${Math.round(r.load.rps).toString().padStart(6)} req/s  p50 ${l.p50.toFixed(2)} ms  p99 ${l.p99.toFixed(2)} ms  ` +
    `${r.sqlPerRequest.Questions.toFixed(3)} SQL/req  RSS ${r.rssMaxMb.toFixed(0)} MB  CPU ${(r.cpu.target * 100).toFixed(0)}%  others ${(r.cpu.others * 100).toFixed(0)}%  [${statuses}${r.load.errors ? ` errors×${r.load.errors}` : ''}]`
  );
}

function job(
  ctx: Context,
  target: Target,
  user: string,
  workload: Workload,
  durationSec: number,
  connections = S.connections,
): LoadJob {
  return { url: target.url, token: ctx.tokens[user], workload, connections, durationSec };
}

async function runScenario(ctx: Context, spec: ScenarioSpec): Promise<ScenarioResult> {
  log(`scenario ${spec.name}: warm-up ${S.warmupSec}s per target`);
  for (const target of ctx.targets) {
    if (spec.deleteShare > 0)
      await ensurePool(ctx, spec.user, deleteBudget(ctx, target.name, S.warmupSec, spec.deleteShare));
    const result = await ctx.loadgen.run(job(ctx, target, spec.user, spec.workload(ctx), S.warmupSec));
    spec.after(ctx, result);
  }
  const rounds: RoundResult[] = [];
  for (let round = 1; round <= S.rounds; round++) {
    if (spec.deleteShare > 0) {
      const needed = ctx.targets.reduce(
        (sum, t) => sum + deleteBudget(ctx, t.name, S.durationSec, spec.deleteShare),
        0,
      );
      await ensurePool(ctx, spec.user, needed);
    }
    for (const name of orderFor(round)) {
      const target = ctx.targets.find((t) => t.name === name)!;
      const result = await measure(ctx, target, round, job(ctx, target, spec.user, spec.workload(ctx), S.durationSec));
      spec.after(ctx, result.load);
      rounds.push(result);
      log(`${spec.name} ${round}/${S.rounds} ${describe(result)}`);
    }
  }
  return { name: spec.name, title: spec.title, description: spec.description, connections: S.connections, rounds };
}

// ---------------------------------------------------------------------------------------------
// Scale: the same list with a small and a large table

async function runScalePhase(ctx: Context, label: string, owner: string, users: number): Promise<ScaleResult> {
  const [[{ n }]] = await ctx.conn.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM plants');
  log(`scale ${label}: ${n} rows in the table`);
  for (const target of ctx.targets)
    await ctx.loadgen.run(job(ctx, target, owner, { kind: 'list', path: LIST_PATH }, S.warmupSec));
  const loaded: RoundResult[] = [];
  const single: RoundResult[] = [];
  for (let round = 1; round <= S.scaleRounds; round++) {
    for (const name of orderFor(round)) {
      const target = ctx.targets.find((t) => t.name === name)!;
      const r = await measure(
        ctx,
        target,
        round,
        job(ctx, target, owner, { kind: 'list', path: LIST_PATH }, S.durationSec),
      );
      loaded.push(r);
      log(`scale ${label} ${round}/${S.scaleRounds} ${describe(r)}`);
      if (S.singleSec > 0) {
        const r1 = await measure(
          ctx,
          target,
          round,
          job(ctx, target, owner, { kind: 'list', path: LIST_PATH }, S.singleSec, 1),
        );
        single.push(r1);
        log(`scale ${label} ${round}/${S.scaleRounds} 1 conn ${describe(r1)}`);
      }
    }
  }
  return { label, rowsInTable: Number(n), users, loaded, single };
}

// ---------------------------------------------------------------------------------------------
// Cluster: two instances on two Galera nodes against one instance on the single server

const CLUSTER_DATABASE = 'plantstore_bench_cluster';

async function runClusterScenario(ctx: Context, serviceEnv: NodeJS.ProcessEnv): Promise<ClusterResult> {
  log(`cluster: starting three Galera nodes (scripts/galera-cluster.sh, ports from ${S.clusterPortBase})`);
  const cluster = await startCluster(ROOT, S.clusterPortBase);
  const instances: Spawned[] = [];
  try {
    log(`cluster: up in ${cluster.startSec.toFixed(0)} s`);
    for (const pid of cluster.pids()) ctx.extraPids.add(pid);
    const admin = await cluster.connect(1);
    try {
      await recreateDatabase(admin, CLUSTER_DATABASE);
    } finally {
      await admin.end();
    }
    const urls: string[] = [];
    for (const node of [1, 2]) {
      const port = S.portBase + 20 + node;
      const proc = startProcess(
        `service on Galera node ${node}`,
        [process.execPath, ...START_PROD.nodeFlags, START_PROD.script],
        {
          env: { ...serviceEnv, DATABASE_URL: cluster.nodeUrl(node, CLUSTER_DATABASE), PORT: String(port) },
          cwd: ROOT,
          logPath: join(OUT, `service-galera${node}.log`),
        },
      );
      instances.push(proc);
      ctx.extraPids.add(proc.pid);
      urls.push(`http://127.0.0.1:${port}`);
      await waitForHttp(`${urls[urls.length - 1]}/plants`, proc);
    }
    const nodeEnv = { ...serviceEnv, DATABASE_URL: cluster.nodeUrl(1, CLUSTER_DATABASE) };
    const tokens = {
      list: await createToken(nodeEnv, 'bench-list'),
      create: await createToken(nodeEnv, 'bench-create'),
    };
    const seed = await cluster.connect(1, CLUSTER_DATABASE);
    try {
      await seedRange(seed, 'bench-list', 1n, PLANTS_PER_USER);
    } finally {
      await seed.end();
    }

    const single = ctx.targets.find((t) => t.name === 'service')!;
    let clusterNextId = CREATE_BASE;
    const workload = (kind: ClusterRound['workload'], setup: ClusterRound['setup']): Workload =>
      kind === 'list'
        ? { kind: 'list', path: LIST_PATH }
        : {
            kind: 'create',
            nextId: String(setup === 'single' ? (ctx.createNext.get('bench-create') ?? CREATE_BASE) : clusterNextId),
          };
    const clusterJob = (kind: ClusterRound['workload'], setup: ClusterRound['setup'], sec: number): LoadJob =>
      setup === 'single'
        ? job(ctx, single, `bench-${kind}`, workload(kind, setup), sec)
        : {
            url: urls[0],
            urls,
            token: tokens[kind],
            workload: workload(kind, setup),
            connections: S.connections,
            durationSec: sec,
          };
    const after = (kind: ClusterRound['workload'], setup: ClusterRound['setup'], load: LoadResult) => {
      if (kind !== 'create') return;
      if (setup === 'single') ctx.createNext.set('bench-create', BigInt(load.nextCreateId!));
      else clusterNextId = BigInt(load.nextCreateId!);
    };
    const kinds = ['list', 'create'] as const;
    log(`cluster: warm-up ${S.warmupSec}s per setup and workload`);
    for (const kind of kinds)
      for (const setup of ['single', 'cluster'] as const)
        after(kind, setup, await ctx.loadgen.run(clusterJob(kind, setup, S.warmupSec)));

    const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) || 0), 0);
    const rounds: ClusterRound[] = [];
    for (let round = 1; round <= S.rounds; round++) {
      for (const kind of kinds) {
        const order = round % 2 === 1 ? (['single', 'cluster'] as const) : (['cluster', 'single'] as const);
        for (const setup of order) {
          await waitForQuiet(ctx);
          const pids = setup === 'single' ? [single.proc.pid] : instances.map((p) => p.pid);
          const dbPids = setup === 'single' ? (ctx.dbPid ? [ctx.dbPid] : []) : cluster.pids();
          const others = othersMeter(ctx);
          const t0 = Date.now();
          const cpu0 = { instances: cpuOf(pids), db: cpuOf(dbPids) };
          const load = await ctx.loadgen.run(clusterJob(kind, setup, S.durationSec));
          const wall = (Date.now() - t0) / 1000;
          after(kind, setup, load);
          const r: ClusterRound = {
            round,
            workload: kind,
            setup,
            load,
            cpu: {
              instances: (cpuOf(pids) - cpu0.instances) / wall,
              db: dbPids.length > 0 ? (cpuOf(dbPids) - cpu0.db) / wall : null,
              others: others(),
            },
          };
          rounds.push(r);
          const statuses = Object.entries(load.status)
            .map(([c, n]) => `${c}×${n}`)
            .join(' ');
          // A run without responses has no percentiles (NaN, null once through IPC).
          const msText = (x: number | null) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(2) : 'n/a');
          log(
            `cluster ${kind} ${round}/${S.rounds} ${setup === 'single' ? '1 instance, 1 server ' : '2 instances, 2 nodes'} ${Math.round(load.rps).toString().padStart(6)} req/s  p50 ${msText(load.latencyMs.p50)} ms  p99 ${msText(load.latencyMs.p99)} ms  instances CPU ${(r.cpu.instances * 100).toFixed(0)}%  db CPU ${r.cpu.db === null ? 'n/a' : `${(r.cpu.db * 100).toFixed(0)}%`}  others ${(r.cpu.others * 100).toFixed(0)}%  [${statuses}${load.errors ? ` errors×${load.errors}` : ''}${load.timeouts ? ` timeouts×${load.timeouts}` : ''}]`,
          );
        }
      }
    }

    log(`cluster: causal reads, ${S.causalStatements} list statements per setting, idle and under writes, twice`);
    const causal: ClusterResult['causal'] = [];
    for (let pass = 1; pass <= 2; pass++) {
      for (const writes of [false, true]) {
        await waitForQuiet(ctx);
        causal.push(...(await probeCausalReads(cluster, CLUSTER_DATABASE, 'bench-list', S.causalStatements, writes)));
      }
    }

    log(`cluster: faults of the writer node, ${S.faultRounds} round(s), one instance writing through HAProxy`);
    const viaProxyPort = S.portBase + 23;
    const viaProxy = startProcess(
      'service through HAProxy',
      [process.execPath, ...START_PROD.nodeFlags, START_PROD.script],
      {
        env: { ...serviceEnv, DATABASE_URL: cluster.haproxyUrl(CLUSTER_DATABASE), PORT: String(viaProxyPort) },
        cwd: ROOT,
        logPath: join(OUT, 'service-haproxy.log'),
      },
    );
    instances.push(viaProxy);
    ctx.extraPids.add(viaProxy.pid);
    await waitForHttp(`http://127.0.0.1:${viaProxyPort}/plants`, viaProxy);
    const faults = await runFaultDrill(cluster, `http://127.0.0.1:${viaProxyPort}`, tokens.create, {
      rounds: S.faultRounds,
      writers: 4,
      firstId: clusterNextId,
      log,
    });
    return {
      description:
        'Two instances of the service, one attached to Galera node 1 and one to node 2 directly (no HAProxy), the load split evenly between them, against one instance on the single server of BENCH_DATABASE_URL; same connections in all, same requests as the list and create scenarios. All three nodes run on this machine.',
      startSec: cluster.startSec,
      connections: S.connections,
      rounds,
      causal,
      faults,
    };
  } finally {
    for (const proc of instances) {
      await stopProcess(proc);
      ctx.extraPids.delete(proc.pid);
    }
    for (const pid of cluster.pids()) ctx.extraPids.delete(pid);
    await cluster.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// SQL trace, parity, profile

async function request(
  url: string,
  method: string,
  path: string,
  token?: string,
  body?: string,
): Promise<{ status: number; body: string; headers: Record<string, string> }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url + path, { method, headers, body });
  const text = await res.text();
  const pick: Record<string, string> = {};
  for (const h of ['content-type', 'link', 'www-authenticate']) {
    const v = res.headers.get(h);
    if (v !== null) pick[h] = v;
  }
  return { status: res.status, body: text, headers: pick };
}

async function traceRequests(ctx: Context): Promise<TraceEntry[] | null> {
  const entries: TraceEntry[] = [];
  const token = ctx.tokens['bench-trace'];
  for (const target of ctx.targets) {
    const steps: [string, () => Promise<unknown>][] = [
      ['GET /plants?limit=20 (cold: first request of the token)', () => request(target.url, 'GET', LIST_PATH, token)],
      ['GET /plants?limit=20', () => request(target.url, 'GET', LIST_PATH, token)],
      ['POST /plants', () => request(target.url, 'POST', '/plants', token, '{"id":42,"name":"traced","tag":"t"}')],
      ['DELETE /plants/42', () => request(target.url, 'DELETE', '/plants/42', token)],
    ];
    for (const [label, step] of steps) {
      const statements = await traceStatements(ctx.conn, async () => void (await step()));
      if (statements === null) return null;
      entries.push({ target: target.name, request: label, statements: statements.map((s) => s.sql) });
    }
  }
  return entries;
}

async function checkParity(ctx: Context): Promise<ParityCheck[]> {
  const t = ctx.tokens['bench-trace'];
  const big = '9223372036854775807';
  const steps: [string, string, string, string | undefined, string | undefined][] = [
    ['list, first page', 'GET', LIST_PATH, ctx.tokens['bench-list'], undefined],
    ['list, last page', 'GET', '/plants?limit=20&after=990', ctx.tokens['bench-list'], undefined],
    ['list, bad limit', 'GET', '/plants?limit=0&sort=x', ctx.tokens['bench-list'], undefined],
    ['create int64 max', 'POST', '/plants', t, `{"id":${big},"name":"Parity 🌵","tag":"x"}`],
    ['create duplicate', 'POST', '/plants', t, `{"id":${big},"name":"again"}`],
    ['create invalid', 'POST', '/plants', t, '{"id":"1","name":" ","extra":true}'],
    ['delete', 'DELETE', `/plants/${big}`, t, undefined],
    ['delete again', 'DELETE', `/plants/${big}`, t, undefined],
    ['no token', 'GET', LIST_PATH, undefined, undefined],
    ['unknown token', 'GET', LIST_PATH, `pst_${'A'.repeat(43)}`, undefined],
  ];
  const answers = new Map<TargetName, Awaited<ReturnType<typeof request>>[]>();
  for (const target of ctx.targets) {
    const list: Awaited<ReturnType<typeof request>>[] = [];
    for (const [, method, path, token, body] of steps) list.push(await request(target.url, method, path, token, body));
    answers.set(target.name, list);
  }
  const checks: ParityCheck[] = [];
  const reference = answers.get('service')!;
  for (const target of ctx.targets.filter((x) => x.name !== 'service')) {
    answers.get(target.name)!.forEach((answer, i) => {
      const want = reference[i];
      const diffs: string[] = [];
      if (answer.status !== want.status) diffs.push(`status ${answer.status} vs ${want.status}`);
      if (answer.body !== want.body)
        diffs.push(`body ${JSON.stringify(answer.body).slice(0, 200)} vs ${JSON.stringify(want.body).slice(0, 200)}`);
      for (const h of ['content-type', 'link', 'www-authenticate']) {
        if ((answer.headers[h] ?? '').toLowerCase() !== (want.headers[h] ?? '').toLowerCase())
          diffs.push(`${h} "${answer.headers[h] ?? ''}" vs "${want.headers[h] ?? ''}"`);
      }
      checks.push({ request: steps[i][0], target: target.name, same: diffs.length === 0, detail: diffs.join('; ') });
    });
  }
  return checks;
}

async function profileService(
  ctx: Context,
  serviceEnv: NodeJS.ProcessEnv,
  spec: ScenarioSpec,
  cpus: string | undefined,
): Promise<ReturnType<typeof summarizeProfile> | null> {
  const file = join(OUT, `profile-${spec.name}.cpuprofile`);
  rmSync(file, { force: true });
  const port = S.portBase + 10;
  const proc = startProcess(
    `profiled service (${spec.name})`,
    [process.execPath, ...START_PROD.nodeFlags, '-r', join(HERE, 'profile-hook.js'), START_PROD.script],
    {
      env: { ...serviceEnv, PORT: String(port), BENCH_PROFILE_OUT: file },
      cwd: ROOT,
      cpus,
      logPath: join(OUT, `profile-${spec.name}.log`),
    },
  );
  ctx.extraPids.add(proc.pid);
  try {
    const target: Target = { name: 'service', proc, url: `http://127.0.0.1:${port}` };
    await waitForHttp(`${target.url}/plants`, proc);
    if (spec.deleteShare > 0)
      await ensurePool(ctx, spec.user, deleteBudget(ctx, 'service', S.warmupSec + S.durationSec, spec.deleteShare));
    spec.after(ctx, await ctx.loadgen.run(job(ctx, target, spec.user, spec.workload(ctx), S.warmupSec)));
    await waitForQuiet(ctx);
    proc.child.kill('SIGUSR2'); // start profiling
    await sleep(200);
    spec.after(ctx, await ctx.loadgen.run(job(ctx, target, spec.user, spec.workload(ctx), S.durationSec)));
    proc.child.kill('SIGUSR2'); // write the profile and exit
    await Promise.race([proc.exited, sleep(15_000)]);
  } finally {
    await stopProcess(proc);
    ctx.extraPids.delete(proc.pid);
  }
  return existsSync(file) ? summarizeProfile(file) : null;
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'bench', 'run.ts'))) throw new Error('run from the repository root: npm run bench');
  mkdirSync(OUT, { recursive: true });
  const startedAt = new Date().toISOString();
  const notes: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    log('interrupted: cleaning up');
    void (async () => {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
      process.exit(130);
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    await initClockTicks();
    const db = parseDbUrl(S.databaseUrl);

    if (!S.skipBuild) {
      log('building the service (npm run build)');
      try {
        await run('npm', ['run', 'build'], { cwd: ROOT });
      } catch (error) {
        const e = error as { stdout?: string; stderr?: string };
        throw new Error(
          `npm run build failed; fix the build (or set BENCH_SKIP_BUILD=1 to use dist/ as it is):\n${e.stdout ?? ''}${e.stderr ?? ''}`,
          { cause: error },
        );
      }
    }
    if (!existsSync(join(ROOT, START_PROD.script))) throw new Error(`${START_PROD.script} is missing: npm run build`);

    // Database server, versions, pinning
    const conn = await connectServer(db);
    cleanups.push(() => conn.end());
    const [[info]] = await conn.query<RowDataPacket[]>(
      'SELECT VERSION() AS version, @@version_comment AS comment, @@pid_file AS pid_file, @@innodb_buffer_pool_size AS bp',
    );
    const isMaria = /mariadb/i.test(`${info.version} ${info.comment}`);
    await recreateDatabase(conn, db.database);
    if (!S.keepDatabase)
      cleanups.push(async () => void (await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``)));
    const serviceDbUrl = withScheme(db, isMaria ? 'mariadb' : 'mysql');
    const peerDbUrl = withScheme(db, 'mysql');

    const local = ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(db.url.hostname);
    const pin = S.pin && (await canPin());
    let dbPid: number | null = local ? findDatabasePid(String(info.pid_file ?? '')) : null;
    const cpusService = pin ? '0' : undefined;
    const cpusOther = pin ? '1' : undefined;
    if (pin) {
      await setAffinity(process.pid, '1');
      if (dbPid) {
        const original = await getAffinity(dbPid);
        await setAffinity(dbPid, '1');
        const pid = dbPid;
        cleanups.push(async () => {
          await setAffinity(pid, original);
          log(`database server affinity restored to ${original}`);
        });
      } else {
        notes.push('The database server is not on this machine (or its pid was not found): it was not pinned.');
      }
    } else {
      notes.push(
        'Nothing was pinned (no taskset, fewer than 2 cores, or BENCH_PIN=0): all processes shared all cores.',
      );
    }
    if (!local) dbPid = null;

    const dirty = (
      await run('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT }).catch(() => ({ stdout: '' }))
    ).stdout.trim();
    const commit = (
      await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).catch(() => ({ stdout: 'unknown' }))
    ).stdout.trim();
    if (dirty)
      notes.push(
        `The service was built from commit ${commit} plus uncommitted changes in src/ (${dirty.split('\n').length} files): the figures are for that working tree.`,
      );

    // The service
    const serviceEnv: NodeJS.ProcessEnv = { ...env };
    for (const key of [
      'DATABASE_URL',
      'SQLITE_PATH',
      'REDIS_URL',
      'CORS_ORIGINS',
      'TRUST_PROXY',
      'PLANTS_MAX_PAGE',
      'LOG_FORMAT',
      'HOST',
      'PORT',
    ])
      delete serviceEnv[key];
    Object.assign(serviceEnv, {
      NODE_ENV: 'production',
      DATABASE_URL: serviceDbUrl,
      HOST: '127.0.0.1',
      PORT: String(S.portBase),
      // warn: successful requests write no line. BENCH_LOG_LEVEL=info measures the default.
      LOG_LEVEL: S.logLevel,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      METRICS_PORT: '0',
      DB_POOL_SIZE: String(S.poolSize),
    });
    log(`starting the service on :${S.portBase} (runs its migrations)`);
    const service = startProcess('service', [process.execPath, ...START_PROD.nodeFlags, START_PROD.script], {
      env: serviceEnv,
      cwd: ROOT,
      cpus: cpusService,
      logPath: join(OUT, 'service.log'),
    });
    cleanups.push(() => stopProcess(service));
    await waitForHttp(`http://127.0.0.1:${S.portBase}/plants`, service);
    await sleep(1000);
    const serviceIdleRssMb = readMemory(service.pid)?.rssMb ?? null;

    // Tokens, through the service's own command line
    const scaleUsers = Math.max(1, Math.round(S.scaleRows / PLANTS_PER_USER));
    const scaleOwner = ownerName('scale-', Math.ceil(scaleUsers / 2), scaleUsers);
    const users = ['bench-list', 'bench-create', 'bench-delete', 'bench-mix', 'bench-trace', scaleOwner];
    log(`creating tokens with node dist/cli.js for ${users.join(', ')}`);
    const tokens: Record<string, string> = {};
    for (const user of users) tokens[user] = await createToken(serviceEnv, user);

    // The peers
    const peerEnv = (port: number): NodeJS.ProcessEnv => ({
      PATH: env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: peerDbUrl,
      DB_POOL_SIZE: String(S.poolSize),
      TOKEN_CACHE_TTL_MS: String(S.peerTokenTtlMs),
      NODE_ENV: 'production',
    });
    const express = startProcess(
      'express peer',
      [process.execPath, ...START_PROD.nodeFlags, join(HERE, 'reference', 'express-peer.js')],
      {
        env: peerEnv(S.portBase + 1),
        cwd: ROOT,
        cpus: cpusService,
        logPath: join(OUT, 'express-peer.log'),
      },
    );
    cleanups.push(() => stopProcess(express));
    const nodehttp = startProcess(
      'node:http peer',
      [process.execPath, ...START_PROD.nodeFlags, join(HERE, 'reference', 'node-http-peer.js')],
      {
        env: peerEnv(S.portBase + 2),
        cwd: ROOT,
        cpus: cpusService,
        logPath: join(OUT, 'node-http-peer.log'),
      },
    );
    cleanups.push(() => stopProcess(nodehttp));
    const targets: Target[] = [
      { name: 'service', proc: service, url: `http://127.0.0.1:${S.portBase}` },
      { name: 'express', proc: express, url: `http://127.0.0.1:${S.portBase + 1}` },
      { name: 'nodehttp', proc: nodehttp, url: `http://127.0.0.1:${S.portBase + 2}` },
    ];
    for (const t of targets) await waitForHttp(`${t.url}/plants`, t.proc);

    const lg = startProcess('load generator', [process.execPath, join(HERE, 'loadgen.js')], {
      env: { PATH: env.PATH, NODE_ENV: 'production' },
      cwd: ROOT,
      cpus: cpusOther,
      logPath: join(OUT, 'loadgen.log'),
      ipc: true,
    });
    cleanups.push(async () => {
      if (lg.child.connected) lg.child.disconnect();
      await stopProcess(lg, 'SIGTERM', 3000);
    });

    const ctx: Context = {
      conn,
      targets,
      loadgen: new LoadGenerator(lg),
      tokens,
      dbPid,
      baseline: { selfCost: {} as Counters, idleNoisePerSec: {} as Counters },
      createNext: new Map(),
      pools: new Map(),
      rpsSeen: new Map(),
      busyStarts: 0,
      quietWaitSec: 0,
      extraPids: new Set(),
    };

    log('seeding: bench-list and bench-mix with 1,000 plants each');
    await seedRange(conn, 'bench-list', 1n, PLANTS_PER_USER);
    await seedRange(conn, 'bench-mix', 1n, PLANTS_PER_USER);
    await ensurePool(ctx, 'bench-mix', 0);
    ctx.pools.set('bench-delete', { next: POOL_BASE, end: POOL_BASE });

    const trace = S.trace ? await traceRequests(ctx) : null;
    if (S.trace && trace === null)
      notes.push('The general query log could not be switched on (needs SUPER, or it was already on): no SQL trace.');
    const parity = await checkParity(ctx);
    const mismatches = parity.filter((p) => !p.same);
    if (mismatches.length > 0)
      log(`parity: ${mismatches.length} answers of the peers differ from the service's (see RESULTS.md)`);

    ctx.baseline = await measureCounterBaseline(conn, 2000);
    log(
      `status counters: ${ctx.baseline.selfCost.Questions} question per read; idle noise ${ctx.baseline.idleNoisePerSec.Questions.toFixed(2)} questions/s`,
    );

    const planned =
      S.scenarios.filter((name) => name !== 'cluster').length * (3 * S.warmupSec + S.rounds * 3 * S.durationSec) +
      (S.scenarios.includes('cluster') ? 30 + 4 * S.warmupSec + S.rounds * 4 * S.durationSec + 20 : 0) +
      (S.scale ? 2 * (3 * S.warmupSec + S.scaleRounds * 3 * (S.durationSec + S.singleSec)) : 0) +
      (S.profile ? 2 * (S.warmupSec + S.durationSec + 5) : 0);
    log(`about ${Math.ceil(planned / 60)} min of load to go`);

    const scenarios: ScenarioResult[] = [];
    for (const name of S.scenarios) {
      if (name === 'cluster') continue;
      const spec = SCENARIOS.find((s) => s.name === name);
      if (!spec) throw new Error(`unknown scenario "${name}" in BENCH_SCENARIOS (list, create, delete, mix, cluster)`);
      scenarios.push(await runScenario(ctx, spec));
    }
    const cluster = S.scenarios.includes('cluster') ? await runClusterScenario(ctx, serviceEnv) : null;

    const profiles: BenchResults['profiles'] = [];
    if (S.profile) {
      for (const name of ['list', 'create']) {
        log(`profiling the service under the ${name} load`);
        const summary = await profileService(
          ctx,
          serviceEnv,
          SCENARIOS.find((s) => s.name === name)!,
          cpusService,
        ).catch((error: unknown) => {
          notes.push(`The ${name} profile failed: ${String((error as Error).message).split('\n')[0]}`);
          return null;
        });
        if (summary) profiles.push({ scenario: name, summary });
      }
    }

    const scale: ScaleResult[] = [];
    const explains: BenchResults['explain'] = [];
    if (S.scale) {
      log('scale: emptying the table; 1,000 rows for one user');
      await conn.query('TRUNCATE TABLE plants');
      await seedRange(conn, scaleOwner, 1n, PLANTS_PER_USER);
      await conn.query('ANALYZE TABLE plants');
      scale.push(await runScalePhase(ctx, `${PLANTS_PER_USER.toLocaleString('en-US')} rows`, scaleOwner, 1));
      log(`scale: filling the table to ${S.scaleRows.toLocaleString('en-US')} rows over ${scaleUsers} users`);
      const t0 = Date.now();
      await seedUsers(conn, 'scale-', scaleUsers, PLANTS_PER_USER, [scaleOwner]);
      await conn.query('ANALYZE TABLE plants');
      log(`scale: seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      await sleep(2000);
      scale.push(await runScalePhase(ctx, `${S.scaleRows.toLocaleString('en-US')} rows`, scaleOwner, scaleUsers));

      // EXPLAIN the service's own list statements, as the general log saw them, and the peers' shape.
      const svc = targets[0];
      const captured = S.trace
        ? await traceStatements(conn, async () => {
            await request(svc.url, 'GET', LIST_PATH, tokens[scaleOwner]);
            await request(svc.url, 'GET', `${LIST_PATH}&after=500`, tokens[scaleOwner]);
          })
        : null;
      const selects = (captured ?? [])
        .map((s) => s.sql)
        .filter((sql) => /^\s*SELECT/i.test(sql) && /FROM\s+`?plants`?/i.test(sql));
      if (selects.length >= 2) {
        explains.push({ label: 'service, first page', result: await explain(conn, selects[0]) });
        explains.push({ label: 'service, page after id 500', result: await explain(conn, selects[1]) });
      } else {
        const shape = (after: boolean) =>
          `SELECT owner, id, name, tag FROM plants WHERE owner = ${conn.escape(scaleOwner)}${after ? ' AND id > 500' : ''} ORDER BY id ASC LIMIT 21`;
        explains.push({
          label: 'service (shape of its query; the log was not available), first page',
          result: await explain(conn, shape(false)),
        });
        explains.push({
          label: 'service (shape of its query; the log was not available), page after id 500',
          result: await explain(conn, shape(true)),
        });
      }
      explains.push({
        label: 'peers, page after id 500',
        result: await explain(
          conn,
          `SELECT id, name, tag FROM plants WHERE owner = ${conn.escape(scaleOwner)} AND id > 500 ORDER BY id LIMIT 21`,
        ),
      });
    }

    const idleAfter = await measureCounterBaseline(conn, 2000);
    const serviceHwmMb = readMemory(service.pid)?.hwmMb ?? null;
    const totalMemGb = os.totalmem() / 1024 ** 3;
    const results: BenchResults = {
      startedAt,
      finishedAt: new Date().toISOString(),
      mode: QUICK ? 'quick' : 'full',
      machine: {
        CPU: `${cpuModel()}, ${os.cpus().length} cores`,
        Memory: `${totalMemGb.toFixed(1)} GiB`,
        Kernel: `${os.type()} ${os.release()}`,
        'Node.js': process.version,
        Database: `${info.version} (${info.comment}), InnoDB buffer pool ${(Number(info.bp) / 1024 ** 2).toFixed(0)} MiB`,
        Service: `commit ${commit}${dirty ? ' + uncommitted changes in src/' : ''}, \`node ${[...START_PROD.nodeFlags, START_PROD.script].join(' ')}\` (npm run start:prod), NODE_ENV=production, LOG_LEVEL=${S.logLevel}, RATE_LIMIT_PER_MINUTE=1000000000, METRICS_PORT=0`,
        Peers: `\`node ${[...START_PROD.nodeFlags, '<peer>.js'].join(' ')}\`: the service's Node flags, so that they do not count for either side`,
        Pinning: pin
          ? `service and peers on CPU 0; ${dbPid ? 'database server, ' : ''}load generator and bench driver on CPU 1 (taskset)`
          : 'none',
        'Load generator': `autocannon ${(JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')) as { version: string }).version} (programmatic API, own process), HTTP/1.1 keep-alive, no pipelining`,
      },
      settings: {
        rounds: String(S.rounds),
        'round duration': `${S.durationSec} s`,
        'warm-up': `${S.warmupSec} s per target and scenario`,
        connections: String(S.connections),
        'database pool': `${S.poolSize} connections per process`,
        'peer token cache TTL': `${S.peerTokenTtlMs} ms`,
        'scale rounds': String(S.scaleRounds),
        'round order': `${TARGETS.map((t) => TARGET_LABEL[t]).join(', ')} in odd rounds; reversed in even rounds`,
        'quiet gate': S.quiet
          ? `wait until other processes use < ${(S.quietThreshold * 100).toFixed(0)}% of a core (at most ${S.quietMaxWaitSec} s per run, ${S.quietBudgetSec} s in all)`
          : 'off',
      },
      notes,
      counterBaseline: { ...ctx.baseline, idleNoiseAfter: idleAfter.idleNoisePerSec },
      parity,
      trace,
      scenarios,
      scale,
      cluster,
      explain: explains,
      profiles,
      serviceIdleRssMb,
      serviceHwmMb,
    };
    const allRounds: { cpu: { others: number } }[] = [
      ...scenarios.flatMap((x) => x.rounds),
      ...scale.flatMap((x) => [...x.loaded, ...x.single]),
      ...(cluster?.rounds ?? []),
    ];
    const busyRounds = allRounds.filter((r) => r.cpu.others > 0.25);
    notes.push(
      `Processes outside the benchmark used a median ${(spread(allRounds.map((r) => r.cpu.others)).median * 100).toFixed(0)}% of a core during the measured runs ` +
        `(max ${(Math.max(0, ...allRounds.map((r) => r.cpu.others)) * 100).toFixed(0)}%; ${busyRounds.length} of ${allRounds.length} runs above 25%). ` +
        (S.quiet
          ? `Before each run the benchmark waited for them to fall below ${(S.quietThreshold * 100).toFixed(0)}% of a core (${Math.round(ctx.quietWaitSec)} s of waiting in all, budget ${S.quietBudgetSec} s; ${ctx.busyStarts} runs started busy after waiting ${S.quietMaxWaitSec} s or once the budget was spent).`
          : 'BENCH_QUIET=0: runs did not wait for a quiet machine.'),
    );
    if (results.counterBaseline.idleNoisePerSec.Questions > 1 || idleAfter.idleNoisePerSec.Questions > 1) {
      notes.push(
        'Other clients were using the database server during the run: the SQL statements per request carry their noise.',
      );
    }
    writeFileSync(
      join(OUT, 'results.json'),
      JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v), 2),
    );
    // A partial run (BENCH_REPORT_DIR) reports beside the full one instead of replacing it.
    const reportDir = process.env.BENCH_REPORT_DIR ? join(ROOT, process.env.BENCH_REPORT_DIR) : join(ROOT, 'bench');
    mkdirSync(reportDir, { recursive: true });
    const resultsFile = join(reportDir, 'RESULTS.md');
    writeFileSync(resultsFile, keepRecordedSections(resultsFile, renderMarkdown(results)));
    writeFileSync(join(reportDir, 'results.svg'), renderSvg(results));
    log(`wrote ${resultsFile} and results.svg beside it`);
    for (const s of scenarios) {
      const ratio = spread(
        s.rounds
          .filter((r) => r.target === 'express')
          .map((r) => s.rounds.find((x) => x.target === 'service' && x.round === r.round)!.load.rps / r.load.rps),
      );
      log(
        `${s.name}: service ÷ ${TARGET_LABEL.express} throughput ${ratio.median.toFixed(2)}x [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`,
      );
    }
  } finally {
    if (!interrupted) for (const c of cleanups.reverse()) await c().catch((e: unknown) => log(`cleanup: ${String(e)}`));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
