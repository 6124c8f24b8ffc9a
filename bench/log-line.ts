/**
 * What the per-request log line costs: the list throughput of the service at LOG_LEVEL=info (one line
 * per request, the default) against the same build at LOG_LEVEL=warn (no line for a successful
 * request), measured side by side.
 *
 * Both instances run at once, pinned to the same core, each under the same load from the other core,
 * so whatever else the machine does slows both alike. Each instance's CPU time (all its threads,
 * from /proc) divided by the requests it answered gives its CPU per request; the ratio of the two,
 * as requests per CPU-second at info against warn, is the line's cost in throughput, with far less
 * noise than two runs one after the other. (The requests each served are reported too, but the
 * scheduler does not always split the core evenly, so their ratio is noisier.) Every round starts a
 * fresh pair and swaps their ports and start order.
 *
 *   npm run bench:log-line          # BENCH_LOG_ROUNDS (9), BENCH_DURATION (10s), BENCH_WARMUP (3s)
 *
 * stdout of each instance is a pipe read by this process, as a container runtime reads it; the lines
 * are counted, so a run where the info instance did not write one line per request is refused.
 */
import { createReadStream } from 'node:fs';
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
import { Round, median, ratioPerRound, ratioSummary, runSideBySide } from './lib/side-by-side';
import { Spawned, sleep, startProcess, stopProcess, waitForHttp } from './lib/sys';

const S = standaloneSettings({
  roundsVariable: 'BENCH_LOG_ROUNDS',
  rounds: 9,
  databaseUrl: 'mysql://root@127.0.0.1:3306/plantstore_bench_log',
  portBase: 3201,
});
const USER = 'bench-log';
const REQUEST_LINE = '"msg":"GET /plants 200"';
/** The reference last: the ratios are info ÷ warn. */
const LEVELS = ['info', 'warn'] as const;
type Level = (typeof LEVELS)[number];

async function countLines(path: string, msg: string): Promise<number> {
  let count = 0;
  let rest = '';
  for await (const chunk of createReadStream(path, 'utf8')) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.includes(msg)) count++;
  }
  return count;
}

interface LevelRun extends Measured {
  /** Request lines the instance wrote during the run. */
  lines: number;
}

/**
 * Every round starts a fresh pair, warms both up at once and loads both at once; odd rounds swap
 * the ports and which instance starts first.
 */
function compareLevels(bench: Standalone, serviceEnv: NodeJS.ProcessEnv, token: string) {
  const command = startProdArgv(ROOT);
  const running = {} as Record<Level, { proc: Spawned; port: number }>;
  const linesBefore = {} as Record<Level, number>;
  const measure = async (level: Level): Promise<LevelRun> => {
    const { proc, port } = running[level];
    // The last lines reach the pipe (LOG_FLUSH_INTERVAL_MS) and the log file before the CPU is read.
    const run = await measureLoad(
      proc.pid,
      () => listLoad(port, token, S.durationSec, S.connections),
      () => sleep(300),
    );
    return { ...run, lines: (await countLines(proc.logPath, REQUEST_LINE)) - linesBefore[level] };
  };
  return runSideBySide<'list', LevelRun>({
    sides: LEVELS.map((level) => ({ name: level, measure: () => measure(level) })),
    workloads: ['list'],
    rounds: S.rounds,
    together: true,
    beforeRound: async (round) => {
      const order = round % 2 === 0 ? LEVELS : ([...LEVELS].reverse() as Level[]);
      for (const [i, level] of order.entries()) {
        const proc = startProcess(`service (${level})`, command, {
          env: { ...serviceEnv, LOG_LEVEL: level, PORT: String(S.portBase + i) },
          cwd: ROOT,
          cpus: bench.serviceCpus,
          logPath: join(OUT, `log-line-${level}.log`),
        });
        running[level] = { proc, port: S.portBase + i };
      }
      await Promise.all(
        LEVELS.map((l) => waitForHttp(`http://127.0.0.1:${running[l].port}/health/live`, running[l].proc)),
      );
      await Promise.all(LEVELS.map((l) => listLoad(running[l].port, token, S.warmupSec, S.connections)));
    },
    // Counted for both before either load starts, so that the two loads start at the same moment.
    beforeRun: async () => {
      for (const level of LEVELS) linesBefore[level] = await countLines(running[level].proc.logPath, REQUEST_LINE);
    },
    afterRound: async () => {
      await Promise.all(Object.values(running).map(({ proc }) => stopProcess(proc)));
    },
    onRound: (round, { list: [info, warn] }) => {
      if (warn.lines !== 0) throw new Error(`the warn instance wrote ${warn.lines} request lines`);
      // autocannon counts the responses it read in time; a line is written per answered request.
      if (info.lines < info.requests) throw new Error(`${info.lines} lines for ${info.requests} requests at info`);
      log(
        `round ${round + 1}/${S.rounds}: info ${info.rps.toFixed(0)} req/s (${info.cpuUsPerRequest.toFixed(1)} µs CPU/req, ${info.lines} lines), warn ${warn.rps.toFixed(0)} req/s (${warn.cpuUsPerRequest.toFixed(1)} µs/req): info/warn per CPU-second ${(warn.cpuUsPerRequest / info.cpuUsPerRequest).toFixed(3)}, served ${(info.requests / warn.requests).toFixed(3)}`,
      );
    },
  });
}

function report(rounds: Round<'list', LevelRun>[], version: string, pin: boolean): string {
  const runs = rounds.map((r) => r.list);
  const [info, warn] = [0, 1];
  const ratios = ratioPerRound(runs, info, (m) => 1 / m.cpuUsPerRequest, warn);
  const served = ratioPerRound(runs, info, (m) => m.requests, warn);
  const cost = 1 - median(ratios);
  const command = startProdArgv(ROOT);
  return [
    `| round | info req/s | info CPU µs/req | warn req/s | warn CPU µs/req | info ÷ warn, requests per CPU-second | info ÷ warn, requests served |`,
    `|---:|---:|---:|---:|---:|---:|---:|`,
    ...runs.map(
      ([i, w], n) =>
        `| ${n + 1} | ${i.rps.toFixed(0)} | ${i.cpuUsPerRequest.toFixed(1)} | ${w.rps.toFixed(0)} | ${w.cpuUsPerRequest.toFixed(1)} | ${ratios[n].toFixed(3)} | ${served[n].toFixed(3)} |`,
    ),
    '',
    `info ÷ warn in requests per CPU-second, median of ${rounds.length} rounds: ${ratioSummary(ratios, true)}; ` +
      `the line costs **${(cost * 100).toFixed(1)}%** of list throughput (target: at most 3%); ` +
      `requests served, info ÷ warn: ${median(served).toFixed(3)}. ` +
      `CPU per request, medians: info ${median(runs.map((r) => r[info].cpuUsPerRequest)).toFixed(1)} µs, warn ${median(runs.map((r) => r[warn].cpuUsPerRequest)).toFixed(1)} µs.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s after ${S.warmupSec} s of warm-up, ${S.connections} connections per instance, ` +
      `\`${command.slice(1).join(' ')}\`, Node.js ${process.version}, ${version}, ${pin ? 'both instances on CPU 0, load and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const serviceEnv = serviceEnvironment(bench.db, bench.version);
  // Migrations, the token and 1,000 plants for the listing user, once.
  const token = await issueToken(ROOT, serviceEnv, USER);
  await seedRange(bench.conn, USER, 1n, 1000);
  const rounds = await compareLevels(bench, serviceEnv, token);
  await finishStandalone(bench, join(OUT, 'log-line.md'), report(rounds, bench.version, bench.pin));
}

runMain(main);
