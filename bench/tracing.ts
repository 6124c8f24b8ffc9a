/**
 * What tracing costs: the list throughput of the service with tracing off (no OTEL_* variable, the
 * default) against the same build with tracing on, exporting over OTLP/HTTP (protobuf, the SDK's
 * default) to a collector stand-in in this process that takes each export and answers 200: once with
 * every request sampled, once with a tenth of them (parentbased_traceidratio 0.1), and once with none
 * (parentbased_traceidratio 0: on, but no request sampled, what every unsampled request pays).
 *
 * Four instances of the build run side by side on the same database, all pinned to CPU 0; only one
 * is loaded at a time, the others idle. Each round measures all four, one after the other, in
 * alternating order; the ratios to tracing off are taken per round, in requests per second and in
 * requests per CPU-second of the service.
 *
 * With BENCH_TOGETHER=1, each round loads the four at once instead, the connections split among
 * them: a round's ratios are then of the same seconds of the machine, which a busy two-core machine,
 * swinging by a fifth within a round, needs for differences of a few percent. The profiles stay one
 * mode at a time: V8's profiler samples wall time, which four processes sharing a core would blur.
 *
 * With BENCH_TRACING_PROFILE=1, each mode is then profiled in turn: a fresh instance, pinned as the
 * others were, under the same load with V8's sampling profiler (profile-hook.ts) for BENCH_DURATION,
 * its self time per request summed by package, so the difference to tracing off shows where
 * tracing's cost goes. BENCH_TRACING_ROUNDS=0 profiles only.
 *
 *   npm run bench:tracing      # BENCH_TRACING_ROUNDS (7), BENCH_DURATION (10s), BENCH_WARMUP (3s),
 *                              # BENCH_TOGETHER, OTEL_BSP_* for the traced instances
 */
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { seedRange } from './lib/db';
import {
  Measured,
  OUT,
  ROOT,
  Standalone,
  finishStandalone,
  issueToken,
  listLoad,
  log,
  measureLoad,
  prepareStandalone,
  runMain,
  serviceEnvironment,
  standaloneSettings,
  startProdArgv,
} from './lib/harness';
import { ProfileSummary, summarizeProfile } from './lib/profile';
import {
  Round,
  connectionsPerSide,
  median,
  ratioPerRound,
  ratioSummary,
  runSideBySide,
  togetherRequested,
} from './lib/side-by-side';
import { Spawned, sleep, startProcess, stopProcess, waitForHttp } from './lib/sys';

const S = standaloneSettings({
  roundsVariable: 'BENCH_TRACING_ROUNDS',
  rounds: 7,
  databaseUrl: 'mysql://root@127.0.0.1:3306/plantstore_bench_tracing',
  portBase: 3321,
});
const USER = 'bench-tracing';
/**
 * Off (the reference); on with every request sampled; on with a tenth of them sampled, as a busy
 * deployment would run; on with none sampled.
 */
const MODES = ['off', 'on', 'sampled', 'unsampled'] as const;
type Mode = (typeof MODES)[number];
const TRACED = ['on', 'sampled', 'unsampled'] as const;
const SAMPLED_RATIO = '0.1';
const PORTS: Record<Mode, number> = {
  off: S.portBase,
  on: S.portBase + 1,
  sampled: S.portBase + 3,
  unsampled: S.portBase + 4,
};
const MODE_TITLES: Record<(typeof TRACED)[number], string> = {
  on: 'on, every request sampled',
  sampled: `on, ${SAMPLED_RATIO} of requests sampled`,
  unsampled: 'on, no request sampled',
};
const COLLECTOR_PORT = S.portBase + 2;
const PROFILE = process.env.BENCH_TRACING_PROFILE === '1';
const TOGETHER = togetherRequested();
const CONNECTIONS = connectionsPerSide(S.connections, MODES.length, TOGETHER);

interface ModeRun extends Measured {
  /**
   * Export requests the collector took from this instance during the run, and their bytes, including
   * what it still held from the run before.
   */
  exports: number;
  exportBytes: number;
}

interface Collector {
  /** Per mode: each traced instance exports to a path of its own (`/<mode>/v1/traces`). */
  counts: Record<string, { exports: number; bytes: number }>;
  close: () => void;
}

/** The collector: takes every OTLP export and answers 200 with an empty body. */
function startCollector(port: number): Promise<Collector> {
  const counts: Collector['counts'] = {};
  const server = createServer((req, res) => {
    const count = (counts[req.url?.split('/')[1] ?? ''] ??= { exports: 0, bytes: 0 });
    req.on('data', (chunk: Buffer) => (count.bytes += chunk.length));
    req.on('end', () => {
      count.exports++;
      res.writeHead(200, { 'Content-Type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve({ counts, close: () => server.close() })),
  );
}

/**
 * The batch processor's settings (OTEL_BSP_*) are the SDK's defaults unless given to the bench:
 * they are passed on to the traced instances, so batch sizes and schedules can be compared.
 */
const BATCH_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_BSP_')));
const tracingEnv = (mode: Mode) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${COLLECTOR_PORT}/${mode}`,
  OTEL_SERVICE_NAME: 'plant-store-bench',
  ...BATCH_ENV,
});
const ratioEnv = (mode: Mode, ratio: string) => ({
  ...tracingEnv(mode),
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: ratio,
});
const MODE_ENV: Record<Mode, NodeJS.ProcessEnv> = {
  off: {},
  on: tracingEnv('on'),
  sampled: ratioEnv('sampled', SAMPLED_RATIO),
  unsampled: ratioEnv('unsampled', '0'),
};

/** The four instances, side by side on CPU 0. */
function startModes(bench: Standalone, baseEnv: NodeJS.ProcessEnv): Record<Mode, Spawned> {
  const services = {} as Record<Mode, Spawned>;
  for (const mode of MODES) {
    services[mode] = startProcess(`service (tracing ${mode})`, startProdArgv(ROOT), {
      env: { ...baseEnv, PORT: String(PORTS[mode]), ...MODE_ENV[mode] },
      cwd: ROOT,
      cpus: bench.serviceCpus,
      logPath: join(OUT, `tracing-${mode}-service.log`),
    });
  }
  return services;
}

function compareModes(services: Record<Mode, Spawned>, collector: Collector, token: string) {
  const measure = async (mode: Mode): Promise<ModeRun> => {
    const count = () => collector.counts[mode] ?? { exports: 0, bytes: 0 };
    const before = { ...count() };
    const run = await measureLoad(services[mode].pid, () => listLoad(PORTS[mode], token, S.durationSec, CONNECTIONS));
    const exports = count().exports - before.exports;
    if (mode === 'on' && exports === 0) throw new Error('tracing on, yet the collector received no export');
    return { ...run, exports, exportBytes: count().bytes - before.bytes };
  };
  log(`warm-up: ${S.warmupSec} s per instance`);
  return runSideBySide<'list', ModeRun>({
    sides: MODES.map((mode) => ({
      name: mode,
      warm: async () => void (await listLoad(PORTS[mode], token, S.warmupSec, S.connections)),
      measure: () => measure(mode),
    })),
    workloads: ['list'],
    rounds: S.rounds,
    together: TOGETHER,
    onRound: (round, { list }) =>
      log(
        `round ${round + 1}/${S.rounds}: ` +
          MODES.map(
            (mode, i) =>
              `${mode} ${list[i].rps.toFixed(0)} req/s (${list[i].cpuUsPerRequest.toFixed(1)} µs CPU/req, ${list[i].exports} exports)`,
          ).join(', '),
      ),
  });
}

interface ModeProfile {
  mode: Mode;
  requests: number;
  summary: ProfileSummary;
}

/**
 * One mode's instance, alone and pinned as in the rounds, under the list load with V8's sampling
 * profiler: warmed up, then profiled for BENCH_DURATION.
 */
async function profileMode(bench: Standalone, baseEnv: NodeJS.ProcessEnv, token: string, mode: Mode) {
  const file = join(OUT, `tracing-${mode}.cpuprofile`);
  rmSync(file, { force: true });
  const [node, ...rest] = startProdArgv(ROOT);
  const proc = startProcess(
    `profiled service (tracing ${mode})`,
    [node, '-r', join(__dirname, 'profile-hook.js'), ...rest],
    {
      env: { ...baseEnv, PORT: String(PORTS[mode]), ...MODE_ENV[mode], BENCH_PROFILE_OUT: file },
      cwd: ROOT,
      cpus: bench.serviceCpus,
      logPath: join(OUT, `tracing-${mode}-profile.log`),
    },
  );
  try {
    await waitForHttp(`http://127.0.0.1:${PORTS[mode]}/health/live`, proc);
    await listLoad(PORTS[mode], token, S.warmupSec, S.connections);
    proc.child.kill('SIGUSR2'); // start profiling
    await sleep(200);
    const result = await listLoad(PORTS[mode], token, S.durationSec, S.connections);
    proc.child.kill('SIGUSR2'); // write the profile and exit
    await Promise.race([proc.exited, sleep(15_000)]);
    if (!existsSync(file)) throw new Error(`no profile of tracing ${mode}`);
    return { mode, requests: result.requests.total, summary: summarizeProfile(file, 40) };
  } finally {
    await stopProcess(proc);
  }
}

/**
 * Self time in µs per request by package, one column per mode: the rows where a traced mode spends
 * more than off are where its cost goes. Packages that are not in a mode's top list count as 0 there.
 */
function profileReport(profiles: ModeProfile[]): string {
  const perRequest = (p: ModeProfile, entries: ProfileSummary['packages'], name: string) =>
    ((entries.find((e) => e.name === name)?.selfMs ?? 0) * 1000) / p.requests;
  const table = (title: string, pick: (s: ProfileSummary) => ProfileSummary['packages'], top: number) => {
    const names = [
      ...new Set(
        profiles.flatMap((p) =>
          pick(p.summary)
            .slice(0, top)
            .map((e) => e.name),
        ),
      ),
    ];
    const rows = names.map((name) => ({ name, cells: profiles.map((p) => perRequest(p, pick(p.summary), name)) }));
    // Largest extra over tracing off first (off is the first column).
    const extra = (cells: number[]) => Math.max(...cells.slice(1)) - cells[0];
    rows.sort((a, b) => extra(b.cells) - extra(a.cells));
    return [
      `| ${title} | ${profiles.map((p) => `${p.mode} µs/req`).join(' | ')} |`,
      `|---|${profiles.map(() => '---:').join('|')}|`,
      `| **busy time in all** | ${profiles.map((p) => ((p.summary.totalMs * p.summary.busyShare * 1000) / p.requests).toFixed(1)).join(' | ')} |`,
      ...rows.map((r) => `| ${r.name} | ${r.cells.map((c) => c.toFixed(1)).join(' | ')} |`),
    ].join('\n');
  };
  return [
    table('self time by package', (s) => s.packages, 15),
    '',
    table('with the package on the stack (inclusive)', (s) => s.inclusive, 12),
    '',
    `Profiles: each mode alone, pinned as in the rounds, ${S.durationSec} s of the list load after ${S.warmupSec} s of warm-up, ` +
      `V8 sampling profiler at 1 ms; requests served: ${profiles.map((p) => `${p.mode} ${p.requests}`).join(', ')}.`,
  ].join('\n');
}

function report(rounds: Round<'list', ModeRun>[], version: string, pin: boolean, profiles: ModeProfile[]): string {
  const runs = rounds.map((r) => r.list);
  const profiled = profiles.length === 0 ? [] : ['', profileReport(profiles)];
  if (runs.length === 0) return profileReport(profiles);
  const kib = (m: ModeRun) => ((m.exportBytes / 1024) * (1000 / (m.rps * S.durationSec))).toFixed(0);
  const cells = (m: ModeRun, mode: Mode) => [
    m.rps.toFixed(0),
    m.cpuUsPerRequest.toFixed(1),
    String(m.p99Ms),
    ...(mode === 'off' ? [] : [`${m.exports}, ${kib(m)}`]),
  ];
  return [
    `| round | ${MODES.map((mode) => `${mode} req/s | ${mode} CPU µs/req | ${mode} p99 ms${mode === 'off' ? '' : ` | ${mode}: exports, KiB per 1,000 requests`}`).join(' | ')} |`,
    `|---:|${MODES.map((mode) => (mode === 'off' ? '---:|---:|---:' : '---:|---:|---:|---:')).join('|')}|`,
    ...runs.map((r, i) => `| ${i + 1} | ${MODES.flatMap((mode, side) => cells(r[side], mode)).join(' | ')} |`),
    '',
    ...TRACED.map((mode) => {
      const side = MODES.indexOf(mode);
      const rps = ratioPerRound(runs, side, (m) => m.rps);
      const cpu = ratioPerRound(runs, side, (m) => 1 / m.cpuUsPerRequest);
      return (
        `Tracing ${MODE_TITLES[mode]} ÷ off, list throughput, median of ${rounds.length} rounds: ` +
        // Loaded together, the instances share the core: their throughput is their share of it,
        // and their requests per CPU-second are the comparison.
        `${ratioSummary(rps, !TOGETHER)}; in requests per CPU-second: ${ratioSummary(cpu, TOGETHER)}.`
      );
    }),
    `Latency p99 (autocannon's, ms), median of ${rounds.length} rounds: ` +
      `${MODES.map((mode, side) => `${mode} ${median(runs.map((r) => r[side].p99Ms))}`).join(', ')}.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s ${TOGETHER ? `with the four instances loaded at once, ${CONNECTIONS} connections each` : `per instance, ${S.connections} connections`}, after ${S.warmupSec} s of warm-up each, ` +
      `\`GET /plants?limit=20\` of an owner of 1,000 plants, \`${startProdArgv(ROOT).slice(1).join(' ')}\`, LOG_LEVEL=warn, no Redis, ` +
      `tracing on = OTEL_EXPORTER_OTLP_ENDPOINT to a collector in the load process (OTLP/HTTP protobuf, ${batchSettings()}), ` +
      `sampled = the same with OTEL_TRACES_SAMPLER=parentbased_traceidratio and OTEL_TRACES_SAMPLER_ARG=${SAMPLED_RATIO}, ` +
      `unsampled = the same with OTEL_TRACES_SAMPLER_ARG=0, ` +
      `Node.js ${process.version}, ${version}, ` +
      `${pin ? 'the four instances on CPU 0, load, collector and database on CPU 1' : 'not pinned'}.`,
    ...profiled,
  ].join('\n');
}

function batchSettings(): string {
  const given = Object.entries(BATCH_ENV).map(([name, value]) => `${name}=${value}`);
  return given.length === 0 ? 'SDK batch defaults' : given.join(', ');
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const collector = await startCollector(COLLECTOR_PORT);
  const baseEnv: NodeJS.ProcessEnv = { ...serviceEnvironment(bench.db, bench.version), LOG_LEVEL: 'warn' };
  const token = await issueToken(ROOT, baseEnv, USER);
  await seedRange(bench.conn, USER, 1n, 1000);
  const services = S.rounds > 0 ? startModes(bench, baseEnv) : ({} as Record<Mode, Spawned>);
  let rounds: Round<'list', ModeRun>[] = [];
  const profiles: ModeProfile[] = [];
  try {
    if (S.rounds > 0) {
      for (const mode of MODES) await waitForHttp(`http://127.0.0.1:${PORTS[mode]}/health/live`, services[mode]);
      rounds = await compareModes(services, collector, token);
    }
    for (const proc of Object.values(services)) await stopProcess(proc);
    if (PROFILE) {
      for (const mode of MODES) {
        log(`profiling tracing ${mode}`);
        profiles.push(await profileMode(bench, baseEnv, token, mode));
      }
    }
  } finally {
    for (const proc of Object.values(services)) await stopProcess(proc);
    collector.close();
  }
  await finishStandalone(bench, join(OUT, 'tracing.md'), report(rounds, bench.version, bench.pin, profiles));
}

runMain(main);
