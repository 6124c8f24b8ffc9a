/**
 * The stall drill: whether the service keeps answering under a create load whose rounds end with
 * requests in flight aborted. One instance of the build as production runs it (the `npm run
 * start:prod` command line, NODE_ENV=production, LOG_LEVEL=info, its stdout a file, MySQL/MariaDB)
 * and the Express peer on the same database take turns: BENCH_STALL_ROUNDS (30) rounds each of
 * BENCH_DURATION (6 s) of 32 keep-alive connections creating plants, each round ending with its
 * sockets destroyed while requests are in flight (autocannon's stop), service and peer alternating.
 *
 * It records every request slower than BENCH_STALL_SLOW (1 s), every whole second of a round in
 * which nothing was answered, and every request still in flight at a round's end that had been for
 * that long. The moment a round goes a second without an answer, or a connection waits that long
 * for one, it captures the database's view (processlist, SHOW ENGINE INNODB STATUS, a plain INSERT
 * and the service's guarded INSERT timed on connections of their own) and the target's (its main
 * thread, its sockets' unread bytes and accept queue, its event-loop delay from its metrics). It
 * exits 1 when a request of the service failed or took longer than BENCH_STALL_SLOW.
 *
 *   npm run bench:stall   # BENCH_STALL_ROUNDS (30), BENCH_DURATION (6s), BENCH_STALL_LOG (file), BENCH_STALL_SUBSCRIPTION (0)
 */
import { ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { withScheme } from './lib/db';
import { integer, seconds } from './lib/env';
import {
  OUT,
  ROOT,
  Standalone,
  finishStandalone,
  issueToken,
  log,
  prepareStandalone,
  runMain,
  serviceEnvironment,
  startProdArgv,
} from './lib/harness';
import { spread } from './lib/report';
import { Capture, Probes, TargetProcess, capture, connectDatabase } from './lib/stall-capture';
import { Spawned, run, sleep, startProcess, stopProcess, waitForHttp } from './lib/sys';
import { startReceiver, subscribe, webhookEnvironment } from './lib/webhooks';
import { CREATE_BASE } from './run/settings';
import type { StallEvent, StallJob, StallRoundResult } from './stall-load';

const env = process.env;
const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_stall',
  rounds: integer(env.BENCH_STALL_ROUNDS, 30),
  durationSec: seconds(env.BENCH_DURATION, 6),
  connections: integer(env.BENCH_CONNECTIONS, 32),
  poolSize: integer(env.BENCH_POOL_SIZE, 10),
  slowMs: seconds(env.BENCH_STALL_SLOW, 1) * 1000,
  /** `file`: the service's stdout is a file (`> file`); `pipe`: a pipe the drill copies to the file. */
  logTo: env.BENCH_STALL_LOG === 'pipe' ? ('pipe' as const) : ('file' as const),
  subscription: env.BENCH_STALL_SUBSCRIPTION === '1',
  /** Where the service's log file goes: a file system of its own when it is to be frozen. */
  logDir: env.BENCH_STALL_LOG_DIR || join(OUT, 'stall'),
  /** A disk that stalls: the log's file system frozen (fsfreeze) this long, in every BENCH_STALL_FREEZE_EVERY-th service round. */
  freezeSec: seconds(env.BENCH_STALL_FREEZE, 0),
  freezeEvery: integer(env.BENCH_STALL_FREEZE_EVERY, 5),
  peer: env.BENCH_STALL_PEER !== '0',
  portBase: integer(env.BENCH_PORT_BASE, 3361),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
};
const USER = 'bench-stall';
const OUT_DIR = join(OUT, 'stall');
/** The probes' plants: the load's owner (the same index ranges as its creates), far from its ids. */
const PROBE_BASE = 10n ** 15n;
/** The service's guarded INSERT for an owner whose subscriptions want none of plant.created (EventOutbox). */
const GUARDED_INSERT =
  'INSERT INTO plants (owner, id, name, tag) SELECT ?, ?, ?, ? FROM DUAL WHERE NOT EXISTS ' +
  `(SELECT 1 FROM webhook_subscriptions s WHERE s.owner = ? AND (s.events LIKE '%"plant.created"%'))`;

type TargetName = 'service' | 'peer';

interface Round {
  round: number;
  target: TargetName;
  result: StallRoundResult;
  captures: { event: StallEvent; capture: Capture }[];
}

/** The load child (stall-load.ts): one round per message, stall events while it runs. */
class Load {
  private seq = 0;
  private readonly child: ChildProcess;

  constructor() {
    this.child = fork(join(__dirname, 'stall-load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  }

  round(job: StallJob, onEvent: (event: StallEvent) => void): Promise<StallRoundResult> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      const listener = (message: { seq: number; event?: StallEvent; result?: StallRoundResult; error?: string }) => {
        if (message.seq !== seq) return;
        if (message.event) return onEvent(message.event);
        this.child.removeListener('message', listener);
        if (message.error) reject(new Error(message.error));
        else resolve(message.result!);
      };
      this.child.on('message', listener);
      this.child.send({ seq, job });
    });
  }

  stop(): void {
    this.child.disconnect();
  }
}

interface Running {
  bench: Standalone;
  service: Spawned;
  peer?: Spawned;
  targets: Record<TargetName, TargetProcess>;
  token: string;
  probes: Probes;
  load: Load;
}

async function startService(bench: Standalone, extraEnv: NodeJS.ProcessEnv): Promise<Spawned> {
  mkdirSync(S.logDir, { recursive: true });
  const logPath = join(S.logDir, 'service.log');
  log(
    `starting the service on :${S.portBase}, LOG_LEVEL=info, stdout ${S.logTo === 'file' ? 'a file' : 'a pipe'}: ${logPath}`,
  );
  const service = startProcess('service', startProdArgv(ROOT), {
    env: {
      ...serviceEnvironment(bench.db, bench.version),
      ...extraEnv,
      LOG_LEVEL: 'info',
      PORT: String(S.portBase),
      METRICS_PORT: String(S.portBase + 2),
      DB_POOL_SIZE: String(S.poolSize),
    },
    cwd: ROOT,
    cpus: bench.serviceCpus,
    logPath,
    toFile: S.logTo === 'file',
  });
  await waitForHttp(`http://127.0.0.1:${S.portBase}/plants`, service);
  return service;
}

/** The Express peer (reference/express-peer.ts) on the service's database, as `npm run bench` starts it. */
async function startPeer(bench: Standalone): Promise<Spawned> {
  const port = S.portBase + 1;
  const peer = startProcess(
    'Express peer',
    [...startProdArgv(ROOT).slice(0, -1), join(__dirname, 'reference', 'express-peer.js')],
    {
      env: {
        PATH: env.PATH,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: withScheme(bench.db, 'mysql'),
        DB_POOL_SIZE: String(S.poolSize),
        NODE_ENV: 'production',
      },
      cwd: ROOT,
      cpus: bench.serviceCpus,
      logPath: join(OUT_DIR, 'express-peer.log'),
    },
  );
  await waitForHttp(`http://127.0.0.1:${port}/plants`, peer);
  return peer;
}

async function start(bench: Standalone): Promise<Running> {
  mkdirSync(OUT_DIR, { recursive: true });
  const hooks = S.subscription ? webhookEnvironment() : {};
  const service = await startService(bench, hooks);
  const token = await issueToken(ROOT, { ...serviceEnvironment(bench.db, bench.version), ...hooks }, USER);
  if (S.subscription) {
    const receiver = await startReceiver();
    receiver.server.unref();
    await subscribe(S.portBase, token, receiver.url);
  }
  const peer = S.peer ? await startPeer(bench) : undefined;
  const target = (name: string, proc: Spawned, port: number, metricsPort?: number): TargetProcess => ({
    name,
    pid: proc.pid,
    port,
    metricsPort,
    logPath: proc.logPath,
  });
  const probes: Probes = {
    view: await connectDatabase(bench.db),
    plain: await connectDatabase(bench.db),
    guarded: await connectDatabase(bench.db),
    owner: USER,
    guardedSql: GUARDED_INSERT,
    nextId: PROBE_BASE,
  };
  return {
    bench,
    service,
    peer,
    targets: {
      service: target('service', service, S.portBase, S.portBase + 2),
      peer: target('Express peer', peer ?? service, S.portBase + 1),
    },
    token,
    probes,
    load: new Load(),
  };
}

/** One round against one target; every stall event of it captured while it lasts. */
async function runRound(running: Running, round: number, target: TargetName, ids: { next: bigint }): Promise<Round> {
  const captures: Promise<{ event: StallEvent; capture: Capture }>[] = [];
  const port = running.targets[target].port;
  const frozen =
    target === 'service' && S.freezeSec > 0 && round % S.freezeEvery === 0 ? freezeLogDisk() : Promise.resolve();
  const result = await running.load.round(
    {
      url: `http://127.0.0.1:${port}`,
      token: running.token,
      connections: S.connections,
      durationSec: S.durationSec,
      nextId: String(ids.next),
      slowMs: S.slowMs,
    },
    (event) => {
      log(`round ${round}, ${target}: ${describeEvent(event)}: capturing`);
      captures.push(capture(running.targets[target], running.probes).then((c) => ({ event, capture: c })));
    },
  );
  ids.next = BigInt(result.nextId);
  await frozen;
  return { round, target, result, captures: await Promise.all(captures) };
}

/**
 * One second into the round, the log's file system is frozen for BENCH_STALL_FREEZE: every write to
 * it waits, as on a disk that stalls. Always thawed again, also when the drill is cut short.
 */
async function freezeLogDisk(): Promise<void> {
  await sleep(1000);
  log(`freezing ${S.logDir} for ${S.freezeSec} s`);
  await run('fsfreeze', ['-f', S.logDir]);
  try {
    await sleep(S.freezeSec * 1000);
  } finally {
    await run('fsfreeze', ['-u', S.logDir]);
  }
}

/** A file system left frozen by a drill cut short would hold every writer to it. */
function thawOnExit(): void {
  if (S.freezeSec <= 0) return;
  const thaw = () => {
    try {
      execFileSync('fsfreeze', ['-u', S.logDir], { stdio: 'ignore' });
    } catch {
      // not frozen
    }
  };
  process.on('exit', thaw);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      thaw();
      process.exit(130);
    });
  }
}

function describeEvent(event: StallEvent): string {
  const ago = ((event.at - event.since) / 1000).toFixed(1);
  return event.kind === 'silence' ? `nothing answered for ${ago} s` : `a request in flight for ${ago} s`;
}

/** A round's failures: answers other than 2xx, socket errors, requests slower than the bound (answered or aborted). */
function failures(r: StallRoundResult): { failed: number; slow: number } {
  const failed = Object.entries(r.status).reduce((sum, [code, n]) => sum + (/^2/.test(code) ? 0 : n), 0) + r.errors;
  return { failed, slow: r.slow.length + r.abortedSlow };
}

const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);

function roundLine(r: Round): string {
  const x = r.result;
  const { failed, slow } = failures(x);
  const statuses = Object.entries(x.status)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  return (
    `| ${r.round} | ${r.target} | ${time(x.startedAt)} | ${x.responses} | ${x.rps.toFixed(0)} | ${x.p99Ms.toFixed(1)} | ` +
    `${x.maxMs.toFixed(1)} | ${statuses} | ${failed} | ${slow} | ${x.silentSeconds.length} | ${x.abortedInFlight} |`
  );
}

function captureLines(r: Round): string[] {
  return r.captures.flatMap(({ event, capture: c }, i) => [
    `#### Round ${r.round}, ${r.target}: ${describeEvent(event)} (since ${time(event.since)}, captured at ${time(c.at)})`,
    '',
    `- main thread: state ${c.thread.state}, in ${c.thread.wchan}, syscall \`${c.thread.syscall.split(' ')[0]}\`; CPU ${(c.cpuShare * 100).toFixed(0)}% of a core`,
    `- sockets on its port: ${c.sockets.established} established, ${c.sockets.withUnread} with ${c.sockets.unreadBytes} bytes unread; accept queue ${c.sockets.acceptQueue}`,
    `- event loop: ${c.eventLoop}`,
    `- log file: ${c.logBytes} bytes`,
    `- a plain INSERT meanwhile: ${c.plainInsert}; the guarded INSERT: ${c.guardedInsert}`,
    `- processlist (${c.processlist.length}): ${c.processlist.slice(0, 12).join('; ') || 'none'}`,
    `- InnoDB (the log, and transactions in this database): ${c.innodb.summary.slice(0, 20).join(' / ')}`,
    `- in full: bench/.out/stall/capture-${r.round}-${r.target}-${i + 1}.txt`,
    '',
  ]);
}

function saveCaptures(rounds: Round[]): void {
  for (const r of rounds) {
    r.captures.forEach(({ event, capture: c }, i) => {
      const file = join(OUT_DIR, `capture-${r.round}-${r.target}-${i + 1}.txt`);
      const text = [
        `${describeEvent(event)} (since ${new Date(event.since).toISOString()})`,
        JSON.stringify({ ...c, innodb: undefined }, null, 2),
        '',
        c.innodb.full,
      ].join('\n');
      writeFileSync(file, text);
    });
  }
}

function summary(rounds: Round[], target: TargetName): string {
  const mine = rounds.filter((r) => r.target === target);
  const total = mine.reduce(
    (sum, r) => {
      const { failed, slow } = failures(r.result);
      return {
        responses: sum.responses + r.result.responses,
        failed: sum.failed + failed,
        slow: sum.slow + slow,
        silent: sum.silent + r.result.silentSeconds.length,
        aborted: sum.aborted + r.result.abortedInFlight,
      };
    },
    { responses: 0, failed: 0, slow: 0, silent: 0, aborted: 0 },
  );
  const p99 = spread(mine.map((r) => r.result.p99Ms));
  const slowest = Math.max(...mine.map((r) => r.result.maxMs));
  return (
    `${target}: ${mine.length} rounds, ${total.responses} answers, ${total.failed} failed, ${total.slow} slower than ` +
    `${S.slowMs} ms, ${total.silent} seconds without an answer, ${total.aborted} requests aborted in flight at the rounds' ends; ` +
    `p99 ${p99.median.toFixed(1)} ms [${p99.min.toFixed(1)}–${p99.max.toFixed(1)}], slowest ${slowest.toFixed(1)} ms`
  );
}

function report(running: Running, rounds: Round[]): string {
  const settings =
    `${S.rounds} rounds of ${S.durationSec} s per target, ${S.connections} connections, pool ${S.poolSize}, ` +
    `LOG_LEVEL=info to ${S.logTo === 'file' ? 'a file' : 'a pipe'}, ${S.subscription ? 'a subscription for the owner' : 'no subscription'}, ` +
    `${S.freezeSec > 0 ? `the log's file system frozen ${S.freezeSec} s in every ${S.freezeEvery}th service round, ` : ''}` +
    `${running.bench.version}, Node.js ${process.version}`;
  return [
    '# Stall drill',
    '',
    settings,
    '',
    ...(['service', 'peer'] as const).filter((t) => t === 'service' || S.peer).map((t) => `- ${summary(rounds, t)}`),
    '',
    '| round | target | start | answers | req/s | p99 ms | slowest ms | statuses | failed | slow | silent s | aborted in flight |',
    '|---:|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...rounds.map(roundLine),
    '',
    ...(rounds.some((r) => r.captures.length > 0) ? ['### Stalls', '', ...rounds.flatMap(captureLines)] : []),
  ].join('\n');
}

async function stop(running: Running): Promise<void> {
  running.load.stop();
  for (const conn of [running.probes.view, running.probes.plain, running.probes.guarded] as Connection[]) {
    await conn.end().catch(() => undefined);
  }
  if (running.peer) await stopProcess(running.peer);
  await stopProcess(running.service);
}

async function main(): Promise<void> {
  thawOnExit();
  const bench = await prepareStandalone(S);
  const running = await start(bench);
  const rounds: Round[] = [];
  const ids = { next: CREATE_BASE };
  try {
    for (let round = 1; round <= S.rounds; round++) {
      for (const target of S.peer ? (['service', 'peer'] as const) : (['service'] as const)) {
        const r = await runRound(running, round, target, ids);
        rounds.push(r);
        const { failed, slow } = failures(r.result);
        log(
          `round ${round}/${S.rounds}, ${target}: ${r.result.responses} answers, p99 ${r.result.p99Ms.toFixed(1)} ms, ` +
            `slowest ${r.result.maxMs.toFixed(1)} ms, ${failed} failed, ${slow} slow, ${r.result.abortedInFlight} aborted in flight`,
        );
      }
    }
  } finally {
    await stop(running);
  }
  saveCaptures(rounds);
  await finishStandalone(bench, join(OUT, 'stall.md'), report(running, rounds));
  const service = rounds.filter((r) => r.target === 'service').map((r) => failures(r.result));
  if (service.some(({ failed, slow }) => failed + slow > 0)) process.exitCode = 1;
}

runMain(main);
