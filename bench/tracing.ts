/**
 * What tracing costs: the list throughput of the service with tracing off (no OTEL_* variable, the
 * default) against the same build with tracing on, exporting over OTLP/HTTP (protobuf, the SDK's
 * default) to a collector stand-in in this process that takes each export and answers 200: once with
 * every request sampled, once with a tenth of them (parentbased_traceidratio 0.1).
 *
 * Three instances of the build run side by side on the same database, all pinned to CPU 0; only one
 * is loaded at a time, the others idle. Each round measures all three, one after the other, in
 * alternating order; the ratios to tracing off are taken per round, in requests per second and in
 * requests per CPU-second of the service.
 *
 *   npm run bench:tracing      # BENCH_TRACING_ROUNDS (7), BENCH_DURATION (10s), BENCH_WARMUP (3s)
 */
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
import { Round, ratioPerRound, ratioSummary, runSideBySide } from './lib/side-by-side';
import { Spawned, startProcess, stopProcess, waitForHttp } from './lib/sys';

const S = standaloneSettings({
  roundsVariable: 'BENCH_TRACING_ROUNDS',
  rounds: 7,
  databaseUrl: 'mysql://root@127.0.0.1:3306/plantstore_bench_tracing',
  portBase: 3321,
});
const USER = 'bench-tracing';
/** Off (the reference); on with every request sampled; on with a tenth of them sampled, as a busy deployment would run. */
const MODES = ['off', 'on', 'sampled'] as const;
type Mode = (typeof MODES)[number];
const TRACED = ['on', 'sampled'] as const;
const SAMPLED_RATIO = '0.1';
const PORTS: Record<Mode, number> = { off: S.portBase, on: S.portBase + 1, sampled: S.portBase + 3 };
const COLLECTOR_PORT = S.portBase + 2;

interface ModeRun extends Measured {
  /**
   * Export requests the collector took during the run, and their bytes: the traced instance's, as the
   * other has no endpoint, including what it still held from the run before.
   */
  exports: number;
  exportBytes: number;
}

interface Collector {
  counts: { exports: number; bytes: number };
  close: () => void;
}

/** The collector: takes every OTLP export (any path) and answers 200 with an empty body. */
function startCollector(port: number): Promise<Collector> {
  const counts = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (counts.bytes += chunk.length));
    req.on('end', () => {
      counts.exports++;
      res.writeHead(200, { 'Content-Type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve({ counts, close: () => server.close() })),
  );
}

/** The three instances, side by side on CPU 0. */
function startModes(bench: Standalone, baseEnv: NodeJS.ProcessEnv): Record<Mode, Spawned> {
  const tracingEnv = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${COLLECTOR_PORT}`,
    OTEL_SERVICE_NAME: 'plant-store-bench',
  };
  const modeEnv: Record<Mode, NodeJS.ProcessEnv> = {
    off: {},
    on: tracingEnv,
    sampled: { ...tracingEnv, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: SAMPLED_RATIO },
  };
  const services = {} as Record<Mode, Spawned>;
  for (const mode of MODES) {
    services[mode] = startProcess(`service (tracing ${mode})`, startProdArgv(ROOT), {
      env: { ...baseEnv, PORT: String(PORTS[mode]), ...modeEnv[mode] },
      cwd: ROOT,
      cpus: bench.serviceCpus,
      logPath: join(OUT, `tracing-${mode}-service.log`),
    });
  }
  return services;
}

function compareModes(services: Record<Mode, Spawned>, collector: Collector, token: string) {
  const measure = async (mode: Mode): Promise<ModeRun> => {
    const exports0 = { ...collector.counts };
    const run = await measureLoad(services[mode].pid, () => listLoad(PORTS[mode], token, S.durationSec, S.connections));
    const exports = collector.counts.exports - exports0.exports;
    if (mode === 'on' && exports === 0) throw new Error('tracing on, yet the collector received no export');
    return { ...run, exports, exportBytes: collector.counts.bytes - exports0.bytes };
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

function report(rounds: Round<'list', ModeRun>[], version: string, pin: boolean): string {
  const runs = rounds.map((r) => r.list);
  const [off, on, sampled] = [0, 1, 2];
  const kib = (m: ModeRun) => ((m.exportBytes / 1024) * (1000 / (m.rps * S.durationSec))).toFixed(0);
  return [
    '| round | off req/s | off CPU µs/req | on req/s | on CPU µs/req | on: exports, KiB per 1,000 requests | sampled req/s | sampled CPU µs/req | sampled: exports, KiB per 1,000 requests |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r, i) =>
        `| ${i + 1} | ${r[off].rps.toFixed(0)} | ${r[off].cpuUsPerRequest.toFixed(1)} | ${r[on].rps.toFixed(0)} | ${r[on].cpuUsPerRequest.toFixed(1)} | ${r[on].exports}, ${kib(r[on])} | ${r[sampled].rps.toFixed(0)} | ${r[sampled].cpuUsPerRequest.toFixed(1)} | ${r[sampled].exports}, ${kib(r[sampled])} |`,
    ),
    '',
    ...TRACED.map((mode) => {
      const side = MODES.indexOf(mode);
      const rps = ratioPerRound(runs, side, (m) => m.rps);
      const cpu = ratioPerRound(runs, side, (m) => 1 / m.cpuUsPerRequest);
      return (
        `Tracing ${mode === 'on' ? 'on, every request sampled' : `on, ${SAMPLED_RATIO} of requests sampled`} ÷ off, list throughput, median of ${rounds.length} rounds: ` +
        `${ratioSummary(rps, true)}; in requests per CPU-second: ${ratioSummary(cpu)}.`
      );
    }),
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per instance after ${S.warmupSec} s of warm-up each, ${S.connections} connections, ` +
      `\`GET /plants?limit=20\` of an owner of 1,000 plants, \`${startProdArgv(ROOT).slice(1).join(' ')}\`, LOG_LEVEL=warn, no Redis, ` +
      `tracing on = OTEL_EXPORTER_OTLP_ENDPOINT to a collector in the load process (OTLP/HTTP protobuf, SDK batch defaults), ` +
      `sampled = the same with OTEL_TRACES_SAMPLER=parentbased_traceidratio and OTEL_TRACES_SAMPLER_ARG=${SAMPLED_RATIO}, ` +
      `Node.js ${process.version}, ${version}, ` +
      `${pin ? 'the three instances on CPU 0, load, collector and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const collector = await startCollector(COLLECTOR_PORT);
  const baseEnv: NodeJS.ProcessEnv = { ...serviceEnvironment(bench.db, bench.version), LOG_LEVEL: 'warn' };
  const token = await issueToken(ROOT, baseEnv, USER);
  await seedRange(bench.conn, USER, 1n, 1000);
  const services = startModes(bench, baseEnv);
  let rounds: Round<'list', ModeRun>[];
  try {
    for (const mode of MODES) await waitForHttp(`http://127.0.0.1:${PORTS[mode]}/health/live`, services[mode]);
    rounds = await compareModes(services, collector, token);
  } finally {
    for (const proc of Object.values(services)) await stopProcess(proc);
    collector.close();
  }
  await finishStandalone(bench, join(OUT, 'tracing.md'), report(rounds, bench.version, bench.pin));
}

runMain(main);
