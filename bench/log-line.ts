/**
 * What the per-request log line costs: the list throughput of the service at LOG_LEVEL=info (one line
 * per request, the default) against the same build at LOG_LEVEL=warn (no line for a successful
 * request), measured side by side; and, with BENCH_LOG_AGAINST, another build's line beside it (a
 * tree where a library writes the line, say), at info as well.
 *
 * The instances run at once, pinned to the same core, each under the same load from the other core,
 * so whatever else the machine does slows them alike. Each instance's CPU time (all its threads,
 * from /proc) divided by the requests it answered gives its CPU per request; the ratio of two, as
 * requests per CPU-second, is what one line costs against the other, with far less noise than two
 * runs one after the other. (The requests each served are reported too, but the scheduler does not
 * always split the core evenly, so their ratio is noisier.) Every round starts fresh instances and
 * rotates their ports and start order.
 *
 *   npm run bench:log-line          # BENCH_LOG_ROUNDS (9), BENCH_DURATION (10s), BENCH_WARMUP (3s)
 *   BENCH_LOG_AGAINST=/path/to/built/tree BENCH_LOG_AGAINST_NAME=pino-http npm run bench:log-line
 *
 * stdout of each instance is a pipe read by this process, as a container runtime reads it; the lines
 * are counted, so a run where an info instance did not write one line per request is refused.
 */
import { createReadStream } from 'node:fs';
import { join, resolve } from 'node:path';
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

/** An instance of a round: a built tree at a log level. */
interface LineSide {
  name: string;
  root: string;
  level: 'info' | 'warn';
}

/** This build at info, the other build at info when given, and this build at warn, the reference, last. */
function linesCompared(): LineSide[] {
  const against = process.env.BENCH_LOG_AGAINST;
  return [
    { name: 'info', root: ROOT, level: 'info' },
    ...(against
      ? [{ name: process.env.BENCH_LOG_AGAINST_NAME || 'other build', root: resolve(against), level: 'info' as const }]
      : []),
    { name: 'warn', root: ROOT, level: 'warn' },
  ];
}
const SIDES = linesCompared();
const WARN = SIDES.length - 1;

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

interface LineRun extends Measured {
  /** Request lines the instance wrote during the run. */
  lines: number;
}

/**
 * Every round starts fresh instances, warms them up at once and loads them at once; each round
 * rotates the ports and the order in which they start.
 */
function compareLines(bench: Standalone, serviceEnv: NodeJS.ProcessEnv, token: string) {
  const running: { proc: Spawned; port: number }[] = [];
  const linesBefore: number[] = [];
  const measure = async (i: number): Promise<LineRun> => {
    const { proc, port } = running[i];
    // The last lines reach the pipe (LOG_FLUSH_INTERVAL_MS) and the log file before the CPU is read.
    const run = await measureLoad(
      proc.pid,
      () => listLoad(port, token, S.durationSec, S.connections),
      () => sleep(300),
    );
    return { ...run, lines: (await countLines(proc.logPath, REQUEST_LINE)) - linesBefore[i] };
  };
  return runSideBySide<'list', LineRun>({
    sides: SIDES.map((side, i) => ({ name: side.name, measure: () => measure(i) })),
    workloads: ['list'],
    rounds: S.rounds,
    together: true,
    beforeRound: async (round) => {
      for (let n = 0; n < SIDES.length; n++) {
        const i = (n + round) % SIDES.length;
        const { root, level } = SIDES[i];
        const proc = startProcess(`service (${SIDES[i].name})`, startProdArgv(root), {
          env: { ...serviceEnv, LOG_LEVEL: level, PORT: String(S.portBase + n) },
          cwd: root,
          cpus: bench.serviceCpus,
          logPath: join(OUT, `log-line-${i}.log`),
        });
        running[i] = { proc, port: S.portBase + n };
      }
      await Promise.all(running.map((r) => waitForHttp(`http://127.0.0.1:${r.port}/health/live`, r.proc)));
      await Promise.all(running.map((r) => listLoad(r.port, token, S.warmupSec, S.connections)));
    },
    // Counted for all before any load starts, so that the loads start at the same moment.
    beforeRun: async () => {
      for (const [i, { proc }] of running.entries()) linesBefore[i] = await countLines(proc.logPath, REQUEST_LINE);
    },
    afterRound: async () => {
      await Promise.all(running.map(({ proc }) => stopProcess(proc)));
    },
    onRound: (round, { list }) => {
      if (list[WARN].lines !== 0) throw new Error(`the warn instance wrote ${list[WARN].lines} request lines`);
      // autocannon counts the responses it read in time; a line is written per answered request.
      for (const [i, run] of list.slice(0, WARN).entries()) {
        if (run.lines < run.requests)
          throw new Error(`${SIDES[i].name}: ${run.lines} lines for ${run.requests} requests`);
      }
      const each = list.map(
        (m, i) => `${SIDES[i].name} ${m.rps.toFixed(0)} req/s (${m.cpuUsPerRequest.toFixed(1)} µs/req)`,
      );
      const ratios = list
        .slice(0, WARN)
        .map((m, i) => `${SIDES[i].name}/warn ${(list[WARN].cpuUsPerRequest / m.cpuUsPerRequest).toFixed(3)}`);
      log(`round ${round + 1}/${S.rounds}: ${each.join(', ')}; per CPU-second ${ratios.join(', ')}`);
    },
  });
}

/** One table row per round: each instance's throughput and CPU per request, then the ratios. */
function roundsTable(runs: LineRun[][], ratios: { title: string; values: number[] }[]): string[] {
  return [
    `| round | ${SIDES.map((s) => `${s.name} req/s | ${s.name} CPU µs/req`).join(' | ')} | ${ratios.map((r) => r.title).join(' | ')} |`,
    `|---:|${SIDES.map(() => '---:|---:').join('|')}|${ratios.map(() => '---:').join('|')}|`,
    ...runs.map(
      (run, n) =>
        `| ${n + 1} | ${run.map((m) => `${m.rps.toFixed(0)} | ${m.cpuUsPerRequest.toFixed(1)}`).join(' | ')} | ${ratios.map((r) => r.values[n].toFixed(3)).join(' | ')} |`,
    ),
  ];
}

function report(rounds: Round<'list', LineRun>[], version: string, pin: boolean): string {
  const runs = rounds.map((r) => r.list);
  const perCpu = (side: number, reference: number) =>
    ratioPerRound(runs, side, (m) => 1 / m.cpuUsPerRequest, reference);
  const against = SIDES.length > 2 ? 1 : undefined;
  const ratios = [
    { title: 'info ÷ warn, requests per CPU-second', values: perCpu(0, WARN) },
    ...(against === undefined
      ? []
      : [
          { title: `${SIDES[against].name} ÷ warn, requests per CPU-second`, values: perCpu(against, WARN) },
          { title: `${SIDES[against].name} ÷ info, requests per CPU-second`, values: perCpu(against, 0) },
        ]),
    { title: 'info ÷ warn, requests served', values: ratioPerRound(runs, 0, (m) => m.requests, WARN) },
  ];
  const cost = (values: number[]) => `**${((1 - median(values)) * 100).toFixed(1)}%**`;
  const medians = SIDES.map((s, i) => `${s.name} ${median(runs.map((r) => r[i].cpuUsPerRequest)).toFixed(1)} µs`);
  const command = startProdArgv(ROOT);
  return [
    ...roundsTable(runs, ratios),
    '',
    `info ÷ warn in requests per CPU-second, median of ${rounds.length} rounds: ${ratioSummary(ratios[0].values, true)}; ` +
      `the line costs ${cost(ratios[0].values)} of list throughput (target: at most 3%); ` +
      `requests served, info ÷ warn: ${median(ratios[ratios.length - 1].values).toFixed(3)}.`,
    ...(against === undefined
      ? []
      : [
          '',
          `${SIDES[against].name} (${SIDES[against].root}) ÷ warn: ${ratioSummary(ratios[1].values, true)}, its line costs ${cost(ratios[1].values)}; ` +
            `÷ info (this build's line): ${ratioSummary(ratios[2].values, true)}, ${cost(ratios[2].values)} more than this build's line.`,
        ]),
    '',
    `CPU per request, medians: ${medians.join(', ')}.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s after ${S.warmupSec} s of warm-up, ${S.connections} connections per instance, ` +
      `\`${command.slice(1).join(' ')}\`, Node.js ${process.version}, ${version}, ${pin ? `the ${SIDES.length} instances on CPU 0, load and database on CPU 1` : 'not pinned'}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const serviceEnv = serviceEnvironment(bench.db, bench.version);
  // Migrations, the token and 1,000 plants for the listing user, once.
  const token = await issueToken(ROOT, serviceEnv, USER);
  await seedRange(bench.conn, USER, 1n, 1000);
  const rounds = await compareLines(bench, serviceEnv, token);
  await finishStandalone(bench, join(OUT, 'log-line.md'), report(rounds, bench.version, bench.pin));
}

runMain(main);
