/**
 * Variants of the service against each other: the same list and create loads on each, rounds
 * alternating their order, and every figure taken as a ratio to the first variant within its round
 * (lib/side-by-side.ts).
 *
 * A variant is a built tree (`dist/`, `node_modules/`, `package.json`) started as `npm run
 * start:prod` starts it, on a Node.js binary of its own if given, with environment of its own: an
 * older commit, another Node.js line, a build without a patch, another setting. They run side by
 * side on one database, pinned to CPU 0 where taskset works (load and database on CPU 1); only one
 * is loaded at a time, or, with BENCH_TOGETHER=1, all at once with the connections split among them:
 * then they share the core at the same moments, and their CPU per request compares them even on a
 * machine whose speed drifts from one second to the next (as shared virtual machines' do).
 *
 *   BENCH_VARIANTS=variants.json npm run bench:variants
 *
 * variants.json: `[{ "name": "...", "root": "/path/to/tree", "node": "/path/to/bin/node",
 * "nodeFlags": ["--flag"], "env": { "LOG_LEVEL": "info" } }, ...]`; only name and root are required
 * (node: the one running the benchmark; flags: those of the tree's `start:prod`). Settings:
 * BENCH_ROUNDS (5), BENCH_DURATION (8 s), BENCH_WARMUP (3 s), BENCH_CONNECTIONS (32),
 * BENCH_WORKLOADS (list,create), BENCH_DATABASE_URL, BENCH_PORT_BASE (3341), BENCH_REPORT
 * (bench/.out/variants.md).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { seedRange } from './lib/db';
import { integer, seconds } from './lib/env';
import {
  LIST_PATH,
  Measured,
  OUT,
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
import { Round, median, ratioPerRound, ratioSummary, runSideBySide } from './lib/side-by-side';
import { Spawned, cpuSeconds, sleep, startProcess, stopProcess, waitForHttp } from './lib/sys';

interface Variant {
  name: string;
  root: string;
  node?: string;
  nodeFlags?: string[];
  env?: Record<string, string>;
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
  together: env.BENCH_TOGETHER === '1',
};
const USER = 'bench-variants';
/** Each variant creates its own ids, from 2^53 up (where a double could not hold them). */
const createBase = (index: number) => 2n ** 53n + BigInt(index) * 10n ** 12n;

function readVariants(): Variant[] {
  if (!S.spec) throw new Error('BENCH_VARIANTS names no file (see the head of bench/variants.ts)');
  const variants = JSON.parse(readFileSync(S.spec, 'utf8')) as Variant[];
  if (!Array.isArray(variants) || variants.length < 2) throw new Error(`${S.spec}: at least two variants`);
  const base = dirname(resolve(S.spec));
  return variants.map((v) => ({ ...v, root: resolve(base, v.root) }));
}

/** `node <flags> dist/main.js` as the tree's `start:prod` says, on the variant's Node.js. */
function commandOf(variant: Variant): string[] {
  const { nodeFlags, script } = startProd(variant.root, variant.nodeFlags);
  return [variant.node ?? process.execPath, ...nodeFlags, script];
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

/** Starts every variant (the first runs the migrations alone), pinned to CPU 0 when possible. */
async function startVariants(
  variants: Variant[],
  serviceEnv: NodeJS.ProcessEnv,
  cpus: string | undefined,
): Promise<Spawned[]> {
  const procs: Spawned[] = [];
  for (const [i, variant] of variants.entries()) {
    const proc = startProcess(`${variant.name}`, commandOf(variant), {
      env: { ...serviceEnv, ...variant.env, PORT: String(S.portBase + i) },
      cwd: variant.root,
      cpus,
      logPath: join(dirname(S.report), `variant-${i}.log`),
    });
    procs.push(proc);
    await waitForHttp(`http://127.0.0.1:${S.portBase + i}/health/live`, proc);
  }
  return procs;
}

/** Each variant under the list of a 1,000-plant owner, or creates of fresh ids of its own. */
function compareVariants(variants: Variant[], procs: Spawned[], token: string): Promise<Round<Workload, Measured>[]> {
  // Loaded together, the variants split the connections among them.
  const connections = S.together ? Math.max(1, Math.round(S.connections / variants.length)) : S.connections;
  const load = (i: number, workload: Workload, sec: number, conns: number) =>
    workload === 'list'
      ? listLoad(S.portBase + i, token, sec, conns)
      : createLoad(S.portBase + i, token, sec, conns, next[i]);
  const next = variants.map((_, i) => ({ next: createBase(i) }));
  log(`warm-up: ${S.warmupSec} s per variant and workload`);
  return runSideBySide<Workload, Measured>({
    sides: variants.map((variant, i) => ({
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
            variants.map((v, i) => `${v.name} ${measured[workload][i].rps.toFixed(0)} req/s`).join(', '),
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

function settingsLine(variants: Variant[], version: string, pin: boolean): string {
  return (
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per variant and workload after ${S.warmupSec} s of warm-up, ` +
    `${S.together ? `the variants loaded at once, ${S.connections} connections split among them` : `one variant at a time, ${S.connections} connections`}, list = \`GET ${LIST_PATH}\` of an owner of 1,000 plants, create = \`POST /plants\` of fresh ids, ` +
    `LOG_LEVEL=warn unless a variant sets it, ${version}, ${pin ? 'the variants on CPU 0, load and database on CPU 1' : 'not pinned'}. ` +
    `Variants: ${variants.map((v) => `${v.name} = \`${commandOf(v).join(' ')}\` in ${v.root}${v.env ? ` with ${JSON.stringify(v.env)}` : ''}`).join('; ')}.`
  );
}

async function main(): Promise<void> {
  const variants = readVariants();
  mkdirSync(dirname(S.report), { recursive: true });
  // The variants are built trees: nothing to build here.
  const bench = await prepareStandalone({ databaseUrl: S.databaseUrl, skipBuild: true });
  const serviceEnv: NodeJS.ProcessEnv = { ...serviceEnvironment(bench.db, bench.version), LOG_LEVEL: 'warn' };
  let procs: Spawned[] = [];
  let rounds: Round<Workload, Measured>[];
  try {
    procs = await startVariants(variants, serviceEnv, bench.serviceCpus);
    const token = await issueToken(variants[0].root, serviceEnv, USER, commandOf(variants[0])[0]);
    await seedRange(bench.conn, USER, 1n, 1000);
    rounds = await compareVariants(variants, procs, token);
  } finally {
    for (const proc of procs) await stopProcess(proc);
  }
  await finishStandalone(bench, S.report, report(variants, rounds, settingsLine(variants, bench.version, bench.pin)));
}

runMain(main);
