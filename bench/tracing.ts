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
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { connectServer, parseDbUrl, recreateDatabase, seedRange } from './lib/db';
import { listLoad, log, median, range, serviceEnvironment, startProdArgv } from './lib/standalone';
import {
  Spawned,
  canPin,
  cpuSeconds,
  initClockTicks,
  run,
  setAffinity,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib/sys';

const env = process.env;
const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_tracing',
  rounds: Number(env.BENCH_TRACING_ROUNDS || 7),
  durationSec: parseFloat(env.BENCH_DURATION || '10'),
  warmupSec: parseFloat(env.BENCH_WARMUP || '3'),
  connections: Number(env.BENCH_CONNECTIONS || 32),
  port: Number(env.BENCH_PORT_BASE || 3321),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
};
const ROOT = process.cwd();
const OUT = join(ROOT, 'bench', '.out');
const USER = 'bench-tracing';
/** Off; on with every request sampled; on with a tenth of them sampled, as a busy deployment would run. */
const MODES = ['off', 'on', 'sampled'] as const;
type Mode = (typeof MODES)[number];
const TRACED: Mode[] = ['on', 'sampled'];
const SAMPLED_RATIO = '0.1';

interface Measured {
  rps: number;
  cpuUsPerRequest: number;
  /**
   * Export requests the collector took during the run, and their bytes: the traced instance's, as the
   * other has no endpoint, including what it still held from the run before.
   */
  exports: number;
  exportBytes: number;
}

/** The collector: takes every OTLP export (any path) and answers 200 with an empty body. */
function startCollector(port: number): Promise<{ counts: { exports: number; bytes: number }; close: () => void }> {
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

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  await initClockTicks();
  if (!S.skipBuild) {
    log('building the service (npm run build)');
    await run('npm', ['run', 'build'], { cwd: ROOT });
  }
  const db = parseDbUrl(S.databaseUrl);
  if (!db.database.includes('bench')) throw new Error('BENCH_DATABASE_URL must name a database containing "bench"');
  const conn = await connectServer(db);
  const [[{ version }]] = (await conn.query('SELECT VERSION() AS version')) as unknown as [[{ version: string }]];
  await recreateDatabase(conn, db.database);
  const pin = await canPin();
  if (pin) await setAffinity(process.pid, '1');

  const collectorPort = S.port + 2;
  const collector = await startCollector(collectorPort);
  const baseEnv: NodeJS.ProcessEnv = { ...serviceEnvironment(db, version), LOG_LEVEL: 'warn' };
  const tracingEnv = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
    OTEL_SERVICE_NAME: 'plant-store-bench',
  };
  const command = startProdArgv(ROOT);
  const { stdout } = await run(process.execPath, ['dist/cli.js', 'token', 'create', '--user', USER], {
    cwd: ROOT,
    env: { ...baseEnv, LOG_LEVEL: 'error' },
  });
  const token = stdout.trim().split('\n').pop()!.trim();
  if (!token.startsWith('pst_')) throw new Error(`token create printed no token:\n${stdout}`);
  await seedRange(conn, USER, 1n, 1000);

  const ports: Record<Mode, number> = { off: S.port, on: S.port + 1, sampled: S.port + 3 };
  const modeEnv: Record<Mode, NodeJS.ProcessEnv> = {
    off: {},
    on: tracingEnv,
    sampled: { ...tracingEnv, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: SAMPLED_RATIO },
  };
  const services = {} as Record<Mode, Spawned>;
  for (const mode of MODES) {
    services[mode] = startProcess(`service (tracing ${mode})`, command, {
      env: { ...baseEnv, PORT: String(ports[mode]), ...modeEnv[mode] },
      cwd: ROOT,
      cpus: pin ? '0' : undefined,
      logPath: join(OUT, `tracing-${mode}-service.log`),
    });
  }
  const rounds: Record<Mode, Measured>[] = [];
  try {
    for (const mode of MODES) await waitForHttp(`http://127.0.0.1:${ports[mode]}/health/live`, services[mode]);

    const measure = async (mode: Mode): Promise<Measured> => {
      const cpu0 = cpuSeconds(services[mode].pid);
      const exports0 = { ...collector.counts };
      const result = await listLoad(ports[mode], token, S.durationSec, S.connections);
      const cpu = cpuSeconds(services[mode].pid) - cpu0;
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`tracing ${mode}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      const exports = collector.counts.exports - exports0.exports;
      if (mode === 'on' && exports === 0) throw new Error('tracing on, yet the collector received no export');
      return {
        rps: result.requests.average,
        cpuUsPerRequest: (cpu * 1e6) / result.requests.total,
        exports,
        exportBytes: collector.counts.bytes - exports0.bytes,
      };
    };

    log(`warm-up: ${S.warmupSec} s per instance`);
    for (const mode of MODES) {
      const warm = await listLoad(ports[mode], token, S.warmupSec, S.connections);
      if (warm.non2xx > 0) throw new Error(`tracing ${mode}: ${warm.non2xx} non-2xx answers in the warm-up`);
    }
    for (let round = 0; round < S.rounds; round++) {
      const order = round % 2 === 0 ? MODES : ([...MODES].reverse() as Mode[]);
      const measured: Partial<Record<Mode, Measured>> = {};
      for (const mode of order) measured[mode] = await measure(mode);
      const all = measured as Record<Mode, Measured>;
      rounds.push(all);
      log(
        `round ${round + 1}/${S.rounds}: ` +
          MODES.map(
            (mode) =>
              `${mode} ${all[mode].rps.toFixed(0)} req/s (${all[mode].cpuUsPerRequest.toFixed(1)} µs CPU/req, ${all[mode].exports} exports)`,
          ).join(', '),
      );
    }
  } finally {
    for (const mode of MODES) await stopProcess(services[mode]);
    collector.close();
  }
  await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``);
  await conn.end();

  const kib = (m: Measured) => ((m.exportBytes / 1024) * (1000 / (m.rps * S.durationSec))).toFixed(0);
  const ratio = (mode: Mode) => ({
    rps: rounds.map((r) => r[mode].rps / r.off.rps),
    cpu: rounds.map((r) => r.off.cpuUsPerRequest / r[mode].cpuUsPerRequest),
  });
  const report = [
    '| round | off req/s | off CPU µs/req | on req/s | on CPU µs/req | on: exports, KiB per 1,000 requests | sampled req/s | sampled CPU µs/req | sampled: exports, KiB per 1,000 requests |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.off.rps.toFixed(0)} | ${r.off.cpuUsPerRequest.toFixed(1)} | ${r.on.rps.toFixed(0)} | ${r.on.cpuUsPerRequest.toFixed(1)} | ${r.on.exports}, ${kib(r.on)} | ${r.sampled.rps.toFixed(0)} | ${r.sampled.cpuUsPerRequest.toFixed(1)} | ${r.sampled.exports}, ${kib(r.sampled)} |`,
    ),
    '',
    ...TRACED.map((mode) => {
      const { rps, cpu } = ratio(mode);
      return (
        `Tracing ${mode === 'on' ? 'on, every request sampled' : `on, ${SAMPLED_RATIO} of requests sampled`} ÷ off, list throughput, median of ${rounds.length} rounds: ` +
        `**${median(rps).toFixed(3)}** ${range(rps)}; in requests per CPU-second: ${median(cpu).toFixed(3)} ${range(cpu)}.`
      );
    }),
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per instance after ${S.warmupSec} s of warm-up each, ${S.connections} connections, ` +
      `\`GET /plants?limit=20\` of an owner of 1,000 plants, \`${command.slice(1).join(' ')}\`, LOG_LEVEL=warn, no Redis, ` +
      `tracing on = OTEL_EXPORTER_OTLP_ENDPOINT to a collector in the load process (OTLP/HTTP protobuf, SDK batch defaults), ` +
      `sampled = the same with OTEL_TRACES_SAMPLER=parentbased_traceidratio and OTEL_TRACES_SAMPLER_ARG=${SAMPLED_RATIO}, ` +
      `Node.js ${process.version}, ${version}, ` +
      `${pin ? 'the three instances on CPU 0, load, collector and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
  writeFileSync(join(OUT, 'tracing.md'), `${report}\n`);
  process.stdout.write(`${report}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
