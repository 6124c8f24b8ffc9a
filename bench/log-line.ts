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
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listLoad, log, median, range, serviceEnvironment, startProdArgv } from './lib/standalone';
import { connectServer, parseDbUrl, recreateDatabase, seedRange } from './lib/db';
import {
  canPin,
  cpuSeconds,
  initClockTicks,
  run,
  setAffinity,
  sleep,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib/sys';

const env = process.env;
const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_log',
  rounds: Number(env.BENCH_LOG_ROUNDS || 9),
  durationSec: parseFloat(env.BENCH_DURATION || '10'),
  warmupSec: parseFloat(env.BENCH_WARMUP || '3'),
  connections: Number(env.BENCH_CONNECTIONS || 32),
  portBase: Number(env.BENCH_PORT_BASE || 3201),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
};
const ROOT = process.cwd();
const OUT = join(ROOT, 'bench', '.out');
const USER = 'bench-log';
const REQUEST_LINE = '"msg":"GET /plants 200"';

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

interface Round {
  info: { rps: number; cpuUsPerRequest: number; requests: number; lines: number };
  warn: { rps: number; cpuUsPerRequest: number; requests: number };
  /** Requests per CPU-second at info ÷ at warn. */
  ratio: number;
  /** Requests served at info ÷ at warn. */
  served: number;
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
  const serviceEnv = serviceEnvironment(db, version);
  const command = startProdArgv(ROOT);

  // Migrations, the token and 1,000 plants for the listing user, once.
  const { stdout } = await run(process.execPath, ['dist/cli.js', 'token', 'create', '--user', USER], {
    cwd: ROOT,
    env: { ...serviceEnv, LOG_LEVEL: 'error' },
  });
  const token = stdout.trim().split('\n').pop()!.trim();
  if (!token.startsWith('pst_')) throw new Error(`token create printed no token:\n${stdout}`);
  await seedRange(conn, USER, 1n, 1000);

  const rounds: Round[] = [];
  for (let round = 0; round < S.rounds; round++) {
    // Odd rounds swap the ports and which instance starts first.
    const levels = round % 2 === 0 ? (['info', 'warn'] as const) : (['warn', 'info'] as const);
    const procs = levels.map((level, i) =>
      startProcess(`service (${level})`, command, {
        env: { ...serviceEnv, LOG_LEVEL: level, PORT: String(S.portBase + i) },
        cwd: ROOT,
        cpus: pin ? '0' : undefined,
        logPath: join(OUT, `log-line-${level}.log`),
      }),
    );
    try {
      await Promise.all(procs.map((p, i) => waitForHttp(`http://127.0.0.1:${S.portBase + i}/health/live`, p)));
      await Promise.all(procs.map((_, i) => listLoad(S.portBase + i, token, S.warmupSec, S.connections)));
      const snapshot = () =>
        Promise.all(
          procs.map(async (p) => ({ cpu: cpuSeconds(p.pid), lines: await countLines(p.logPath, REQUEST_LINE) })),
        );
      const before = await snapshot();
      const results = await Promise.all(
        procs.map((_, i) => listLoad(S.portBase + i, token, S.durationSec, S.connections)),
      );
      await sleep(300); // the last lines reach the pipe (LOG_FLUSH_INTERVAL_MS) and the log file
      const after = await snapshot();
      const of = (level: 'info' | 'warn') => {
        const i = levels.indexOf(level);
        const requests = results[i].requests.total;
        if (results[i].non2xx > 0 || results[i].errors > 0)
          throw new Error(`${level}: ${results[i].non2xx} non-2xx answers, ${results[i].errors} errors`);
        return {
          rps: results[i].requests.average,
          requests,
          cpuUsPerRequest: ((after[i].cpu - before[i].cpu) * 1e6) / requests,
          lines: after[i].lines - before[i].lines,
        };
      };
      const info = of('info');
      const warn = of('warn');
      if (warn.lines !== 0) throw new Error(`the warn instance wrote ${warn.lines} request lines`);
      // autocannon counts the responses it read in time; a line is written per answered request.
      if (info.lines < info.requests) throw new Error(`${info.lines} lines for ${info.requests} requests at info`);
      const ratio = warn.cpuUsPerRequest / info.cpuUsPerRequest;
      const served = info.requests / warn.requests;
      rounds.push({ info, warn, ratio, served });
      log(
        `round ${round + 1}/${S.rounds}: info ${info.rps.toFixed(0)} req/s (${info.cpuUsPerRequest.toFixed(1)} µs CPU/req, ${info.lines} lines), warn ${warn.rps.toFixed(0)} req/s (${warn.cpuUsPerRequest.toFixed(1)} µs/req): info/warn per CPU-second ${ratio.toFixed(3)}, served ${served.toFixed(3)}`,
      );
    } finally {
      await Promise.all(procs.map((p) => stopProcess(p)));
    }
  }
  await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``);
  await conn.end();

  const ratios = rounds.map((r) => r.ratio);
  const cost = 1 - median(ratios);
  const lines = [
    `| round | info req/s | info CPU µs/req | warn req/s | warn CPU µs/req | info ÷ warn, requests per CPU-second | info ÷ warn, requests served |`,
    `|---:|---:|---:|---:|---:|---:|---:|`,
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.info.rps.toFixed(0)} | ${r.info.cpuUsPerRequest.toFixed(1)} | ${r.warn.rps.toFixed(0)} | ${r.warn.cpuUsPerRequest.toFixed(1)} | ${r.ratio.toFixed(3)} | ${r.served.toFixed(3)} |`,
    ),
    '',
    `info ÷ warn in requests per CPU-second, median of ${rounds.length} rounds: **${median(ratios).toFixed(3)}** ${range(ratios)}; ` +
      `the line costs **${(cost * 100).toFixed(1)}%** of list throughput (target: at most 3%); ` +
      `requests served, info ÷ warn: ${median(rounds.map((r) => r.served)).toFixed(3)}. ` +
      `CPU per request, medians: info ${median(rounds.map((r) => r.info.cpuUsPerRequest)).toFixed(1)} µs, warn ${median(rounds.map((r) => r.warn.cpuUsPerRequest)).toFixed(1)} µs.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s after ${S.warmupSec} s of warm-up, ${S.connections} connections per instance, ` +
      `\`${command.slice(1).join(' ')}\`, Node.js ${process.version}, ${version}, ${pin ? 'both instances on CPU 0, load and database on CPU 1' : 'not pinned'}.`,
  ];
  const report = lines.join('\n');
  writeFileSync(join(OUT, 'log-line.md'), `${report}\n`);
  process.stdout.write(`${report}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
