/**
 * Variants of the service against each other: the same list and create loads on each, rounds
 * alternating their order, and every figure taken as a ratio to the first variant within its round
 * (a two-core machine swings by a fifth between rounds; within one round the variants share it).
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
import autocannon from 'autocannon';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { seedRange } from './lib/db';
import { LIST_PATH, freshBenchDatabase, log, median, range, serviceEnvironment } from './lib/standalone';
import {
  Spawned,
  canPin,
  cpuSeconds,
  initClockTicks,
  run,
  sampleRss,
  setAffinity,
  sleep,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib/sys';

interface Variant {
  name: string;
  root: string;
  node?: string;
  nodeFlags?: string[];
  env?: Record<string, string>;
}

type Workload = 'list' | 'create';

interface Measured {
  rps: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  maxRssMb: number;
}

const env = process.env;
const S = {
  spec: env.BENCH_VARIANTS ?? '',
  rounds: Number(env.BENCH_ROUNDS || 5),
  durationSec: parseFloat(env.BENCH_DURATION || '8'),
  warmupSec: parseFloat(env.BENCH_WARMUP || '3'),
  connections: Number(env.BENCH_CONNECTIONS || 32),
  workloads: (env.BENCH_WORKLOADS || 'list,create').split(',').map((w) => w.trim()) as Workload[],
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_variants',
  portBase: Number(env.BENCH_PORT_BASE || 3341),
  report: env.BENCH_REPORT || join(process.cwd(), 'bench', '.out', 'variants.md'),
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
  const script = (
    JSON.parse(readFileSync(join(variant.root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts['start:prod'];
  const [node, ...rest] = script.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`${variant.name}: start:prod is not "node [flags] <script>": ${script}`);
  const flags = variant.nodeFlags ?? rest.slice(0, -1);
  return [variant.node ?? process.execPath, ...flags, rest[rest.length - 1]];
}

/** The load of one run: the list of a 1,000-plant owner, or creates of fresh ids from `next`. */
async function load(
  port: number,
  token: string,
  workload: Workload,
  seconds: number,
  next: { id: bigint },
  connections = S.connections,
) {
  const authorization = `Bearer ${token}`;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests:
      workload === 'list'
        ? [{ method: 'GET', path: LIST_PATH, headers: { authorization } }]
        : [
            {
              method: 'POST',
              path: '/plants',
              setupRequest: (req) => ({
                ...req,
                headers: { authorization, 'content-type': 'application/json' },
                body: `{"id":${next.id++},"name":"bench plant","tag":"bench"}`,
              }),
            },
          ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${workload} on :${port}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
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

async function measure(
  proc: Spawned,
  port: number,
  token: string,
  workload: Workload,
  next: { id: bigint },
  connections = S.connections,
) {
  const cpu0 = cpuSeconds(proc.pid);
  const rss = sampleRss(proc.pid);
  const result = await load(port, token, workload, S.durationSec, next, connections);
  const measured: Measured = {
    rps: result.requests.average,
    p99Ms: result.latency.p99,
    cpuUsPerRequest: ((cpuSeconds(proc.pid) - cpu0) * 1e6) / result.requests.total,
    maxRssMb: rss.stop(),
  };
  return measured;
}

/** Starts every variant (the first runs the migrations alone), pinned to CPU 0 when possible. */
async function startVariants(variants: Variant[], serviceEnv: NodeJS.ProcessEnv, pin: boolean): Promise<Spawned[]> {
  const procs: Spawned[] = [];
  for (const [i, variant] of variants.entries()) {
    const proc = startProcess(`${variant.name}`, commandOf(variant), {
      env: { ...serviceEnv, ...variant.env, PORT: String(S.portBase + i) },
      cwd: variant.root,
      cpus: pin ? '0' : undefined,
      logPath: join(dirname(S.report), `variant-${i}.log`),
    });
    procs.push(proc);
    await waitForHttp(`http://127.0.0.1:${S.portBase + i}/health/live`, proc);
  }
  return procs;
}

type Round = Record<Workload, Measured[]>;

async function runRounds(variants: Variant[], procs: Spawned[], token: string): Promise<Round[]> {
  const next = variants.map((_, i) => ({ id: createBase(i) }));
  log(`warm-up: ${S.warmupSec} s per variant and workload`);
  for (const workload of S.workloads)
    for (const i of variants.keys()) await load(S.portBase + i, token, workload, S.warmupSec, next[i]);
  const rounds: Round[] = [];
  for (let round = 0; round < S.rounds; round++) {
    const order = [...variants.keys()];
    if (round % 2 === 1) order.reverse();
    const measured = Object.fromEntries(S.workloads.map((w) => [w, [] as Measured[]])) as Round;
    const share = Math.max(1, Math.round(S.connections / variants.length));
    for (const workload of S.workloads) {
      if (S.together) {
        await settle(procs);
        measured[workload] = await Promise.all(
          variants.map((_, i) => measure(procs[i], S.portBase + i, token, workload, next[i], share)),
        );
        continue;
      }
      for (const i of order) {
        await settle(procs);
        measured[workload][i] = await measure(procs[i], S.portBase + i, token, workload, next[i]);
      }
    }
    rounds.push(measured);
    for (const workload of S.workloads)
      log(
        `round ${round + 1}/${S.rounds} ${workload}: ` +
          variants.map((v, i) => `${v.name} ${measured[workload][i].rps.toFixed(0)} req/s`).join(', '),
      );
  }
  return rounds;
}

function report(variants: Variant[], rounds: Round[], settings: string): string {
  const lines: string[] = [];
  for (const workload of S.workloads) {
    lines.push(
      `### ${workload}`,
      '',
      `| variant | req/s | p99 ms | CPU µs/request | max RSS MB | req/s ÷ ${variants[0].name}, per round | requests per CPU-second ÷ ${variants[0].name} | p99 ÷ ${variants[0].name} |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const [i, variant] of variants.entries()) {
      const of = (pick: (m: Measured) => number) => rounds.map((r) => pick(r[workload][i]));
      const ratio = (pick: (m: Measured) => number) => rounds.map((r) => pick(r[workload][i]) / pick(r[workload][0]));
      lines.push(
        `| ${variant.name} | ${median(of((m) => m.rps)).toFixed(0)} | ${median(of((m) => m.p99Ms)).toFixed(1)} | ` +
          `${median(of((m) => m.cpuUsPerRequest)).toFixed(0)} | ${Math.max(...of((m) => m.maxRssMb)).toFixed(0)} | ` +
          `${median(ratio((m) => m.rps)).toFixed(3)} ${range(ratio((m) => m.rps))} | ` +
          `${median(ratio((m) => 1 / m.cpuUsPerRequest)).toFixed(3)} ${range(ratio((m) => 1 / m.cpuUsPerRequest))} | ` +
          `${median(ratio((m) => m.p99Ms)).toFixed(2)} |`,
      );
    }
    lines.push('');
  }
  lines.push(settings);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const variants = readVariants();
  mkdirSync(dirname(S.report), { recursive: true });
  await initClockTicks();
  const { db, conn, version } = await freshBenchDatabase(S.databaseUrl);
  const pin = await canPin();
  if (pin) await setAffinity(process.pid, '1');
  const serviceEnv: NodeJS.ProcessEnv = { ...serviceEnvironment(db, version), LOG_LEVEL: 'warn' };
  let procs: Spawned[] = [];
  let rounds: Round[];
  try {
    procs = await startVariants(variants, serviceEnv, pin);
    const first = commandOf(variants[0]);
    const { stdout } = await run(first[0], ['dist/cli.js', 'token', 'create', '--user', USER], {
      cwd: variants[0].root,
      env: { ...serviceEnv, LOG_LEVEL: 'error' },
    });
    const token = stdout.trim().split('\n').pop()!.trim();
    await seedRange(conn, USER, 1n, 1000);
    rounds = await runRounds(variants, procs, token);
  } finally {
    for (const proc of procs) await stopProcess(proc);
  }
  await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``);
  await conn.end();
  const settings =
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per variant and workload after ${S.warmupSec} s of warm-up, ` +
    `${S.together ? `the variants loaded at once, ${S.connections} connections split among them` : `one variant at a time, ${S.connections} connections`}, list = \`GET ${LIST_PATH}\` of an owner of 1,000 plants, create = \`POST /plants\` of fresh ids, ` +
    `LOG_LEVEL=warn unless a variant sets it, ${version}, ${pin ? 'the variants on CPU 0, load and database on CPU 1' : 'not pinned'}. ` +
    `Variants: ${variants.map((v) => `${v.name} = \`${commandOf(v).join(' ')}\` in ${v.root}${v.env ? ` with ${JSON.stringify(v.env)}` : ''}`).join('; ')}.`;
  const text = report(variants, rounds, settings);
  writeFileSync(S.report, `${text}\n`);
  process.stdout.write(`${text}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
