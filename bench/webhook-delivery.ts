/**
 * Whether webhook delivery keeps up with the events the API records: an owner with one subscription
 * (plant.created and plant.deleted, to a receiver in this process on 127.0.0.1 answering 204) loads
 * the instance with the mix of `npm run bench` (per connection 16 lists, 3 creates, 1 delete), and
 * every 5 s the events recorded (rows of webhook_deliveries) are set against those delivered (the
 * receiver's count, and the rows in state 'delivered'). When the load stops, the backlog (rows still
 * pending) is counted and timed until it is gone. That runs with the API instance delivering, then,
 * on a build that has them, with the API at WEBHOOK_DELIVERY=false beside one and then two delivery
 * workers (`npm run start:worker`). Last, with delivery off everywhere, BENCH_BACKLOG events are
 * recorded through the API by creates, the API is stopped, and one worker, then (on a database
 * recorded anew) two, are timed until nothing is pending. The `fairness` part: a subscriber whose
 * endpoint never answers has BENCH_TARPIT_BACKLOG events due, while another subscriber's events
 * (one every 100 ms, to an endpoint answering 204 at once) are timed from their commit to their
 * arrival, with the per-subscription shares at their defaults, then with them as wide as
 * WEBHOOK_CONCURRENCY (every slot open to one subscription, as before the shares).
 *
 * Each part starts on a database created anew. The instances run as production does (the
 * `start:prod` and `start:worker` command lines, NODE_ENV=production, LOG_LEVEL=info, the
 * delivery settings' defaults).
 *
 *   npm run bench:delivery   # BENCH_DELIVERY_SECONDS (60s), BENCH_BACKLOG (100000), BENCH_DELIVERY_PARTS
 *   BENCH_DELIVERY_PARTS=fairness npm run bench:delivery   # BENCH_FAIRNESS_SECONDS (30s), BENCH_TARPIT_BACKLOG (2000)
 */
import autocannon from 'autocannon';
import type { RowDataPacket } from 'mysql2/promise';
import { readFileSync } from 'node:fs';
import { Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { recreateDatabase, seedRange } from './lib/db';
import { integer, seconds } from './lib/env';
import {
  LIST_PATH,
  OUT,
  ROOT,
  Standalone,
  finishStandalone,
  issueToken,
  log,
  prepareStandalone,
  runMain,
  serviceEnvironment,
  startProd,
  startProdArgv,
} from './lib/harness';
import {
  Spawned,
  cpuSeconds,
  findDatabasePid,
  getAffinity,
  run,
  setAffinity,
  sleep,
  startProcess,
  stopProcess,
  systemBusySeconds,
  tail,
  waitForHttp,
} from './lib/sys';
import { Receiver, startReceiver, subscribe, webhookEnvironment } from './lib/webhooks';
import type { LoadResult } from './loadgen';
import { LoadGenerator } from './run/load';
import { CREATE_BASE, PLANTS_PER_USER, POOL_BASE } from './run/settings';
import { Cleanups } from './run/setup';

const PARTS = ['inline', 'workers', 'backlog', 'fairness'] as const;
type Part = (typeof PARTS)[number];

function parts(text: string | undefined): Part[] {
  // The fairness part is asked for by name: it measures a tail latency, not throughput.
  if (!text) return PARTS.filter((part) => part !== 'fairness');
  const named = text.split(',').map((p) => p.trim());
  const unknown = named.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new Error(`BENCH_DELIVERY_PARTS: unknown ${unknown.join(', ')} (${PARTS.join(', ')})`);
  return named as Part[];
}

const env = process.env;
const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_delivery',
  portBase: integer(env.BENCH_PORT_BASE, 3381),
  connections: integer(env.BENCH_CONNECTIONS, 16),
  loadSec: seconds(env.BENCH_DELIVERY_SECONDS, 60),
  backlog: integer(env.BENCH_BACKLOG, 100_000),
  drainSec: seconds(env.BENCH_DRAIN_SECONDS, 600),
  quietMaxWaitSec: seconds(env.BENCH_QUIET_MAX_WAIT, 120),
  parts: parts(env.BENCH_DELIVERY_PARTS),
  fairnessSec: seconds(env.BENCH_FAIRNESS_SECONDS, 30),
  tarpitBacklog: integer(env.BENCH_TARPIT_BACKLOG, 2000),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
};
const OWNER = 'bench-delivery';
const LOG_LEVEL = 'info';
const INTERVAL_MS = 5000;
const API_URL = `http://127.0.0.1:${S.portBase}`;
/** Seeded ids for the mix's deletes (1 request in 20), enough for 6,000 requests a second. */
const DELETE_POOL = Math.ceil((S.loadSec * 6000) / 20) + S.connections * 4;

/** `npm run start:worker` as an argv on the Node.js running the benchmark; null on a build without it. */
function workerArgv(): string[] | null {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  const script = scripts['start:worker'];
  if (script === undefined) return null;
  const words = script.trim().split(/\s+/);
  const scriptAt = words.findIndex((word, i) => i > 0 && !word.startsWith('-'));
  const flags = words.slice(1, scriptAt);
  if (words[0] !== 'node' || scriptAt < 0 || flags.join(' ') !== startProd(ROOT).nodeFlags.join(' ')) {
    throw new Error(`npm run start:worker is not "node <the flags of start:prod> <script> ...": ${script}`);
  }
  return [process.execPath, ...words.slice(1)];
}

/** The database server on CPU 1 with the load, as `npm run bench` pins it; its affinity comes back at the end. */
async function pinDatabase(bench: Standalone, cleanups: Cleanups): Promise<number | null> {
  if (!bench.pin) return null;
  const [[row]] = await bench.conn.query<RowDataPacket[]>('SELECT @@pid_file AS pidFile');
  const pid = findDatabasePid(String(row.pidFile ?? ''));
  if (pid === null) return null;
  const original = await getAffinity(pid);
  await setAffinity(pid, '1');
  cleanups.add(async () => {
    await setAffinity(pid, original);
    log(`database server affinity restored to ${original}`);
  });
  return pid;
}

interface Rig {
  bench: Standalone;
  receiver: Receiver;
  loadgen: LoadGenerator;
  dbPid: number | null;
  worker: string[] | null;
  cleanups: Cleanups;
}

/** The service's processes for one part: the API instance, and the workers once started. */
interface Deployment {
  api: Spawned;
  env: NodeJS.ProcessEnv;
  token: string;
  workers: Spawned[];
}

/** A database created anew, the owner's token, plants and subscription, and the API instance. */
async function deploy(rig: Rig, name: string, apiDelivers: boolean): Promise<Deployment> {
  const { bench } = rig;
  await recreateDatabase(bench.conn, bench.db.database);
  const deployEnv: NodeJS.ProcessEnv = {
    ...serviceEnvironment(bench.db, bench.version),
    PORT: String(S.portBase),
    LOG_LEVEL,
    ...webhookEnvironment(),
    ...(apiDelivers ? {} : { WEBHOOK_DELIVERY: 'false' }),
  };
  const token = await issueToken(ROOT, deployEnv, OWNER);
  await seedRange(bench.conn, OWNER, 1n, PLANTS_PER_USER);
  await seedRange(bench.conn, OWNER, POOL_BASE, DELETE_POOL);
  const api = startProcess('service', startProdArgv(ROOT), {
    env: deployEnv,
    cwd: ROOT,
    cpus: bench.serviceCpus,
    logPath: join(OUT, `webhook-delivery-${name}-service.log`),
  });
  rig.cleanups.add(() => stopProcess(api));
  await waitForHttp(`${API_URL}/health/live`, api);
  await subscribe(S.portBase, token, rig.receiver.url);
  return { api, env: deployEnv, token, workers: [] };
}

/** `count` workers beside the deployment, with its environment, delivering. */
function startWorkers(rig: Rig, d: Deployment, name: string, count: number): void {
  const workerEnv: NodeJS.ProcessEnv = { ...d.env };
  delete workerEnv.WEBHOOK_DELIVERY;
  delete workerEnv.PORT;
  for (let i = 1; i <= count; i++) {
    const worker = startProcess(`worker ${i}`, rig.worker!, {
      env: workerEnv,
      cwd: ROOT,
      cpus: rig.bench.serviceCpus,
      logPath: join(OUT, `webhook-delivery-${name}-worker-${i}.log`),
    });
    rig.cleanups.add(() => stopProcess(worker));
    d.workers.push(worker);
  }
}

async function undeploy(d: Deployment): Promise<void> {
  await Promise.all([d.api, ...d.workers].map((proc) => stopProcess(proc)));
}

function checkRunning(procs: Spawned[]): void {
  for (const proc of procs) {
    if (proc.child.exitCode !== null)
      throw new Error(`${proc.name} exited (${proc.child.exitCode}):\n${tail(proc.logPath)}`);
  }
}

/** One reading of the deliveries: rows recorded, pending and delivered, and what the receiver got. */
interface Counts {
  at: number;
  recorded: number;
  pending: number;
  delivered: number;
  received: number;
}

async function readCounts(rig: Rig): Promise<Counts> {
  const received = rig.receiver.received();
  const at = Date.now();
  const [[row]] = await rig.bench.conn.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS recorded, COALESCE(SUM(state = 'pending'), 0) AS pending,
       COALESCE(SUM(state = 'delivered'), 0) AS delivered FROM webhook_deliveries`,
  );
  return {
    at,
    received,
    recorded: Number(row.recorded),
    pending: Number(row.pending),
    delivered: Number(row.delivered),
  };
}

async function pendingNow(rig: Rig): Promise<number> {
  const [[row]] = await rig.bench.conn.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = 'pending'`,
  );
  return Number(row.n);
}

/** CPU seconds of each process of the benchmark and of the whole machine, to turn into cores over a span. */
function cpuMeter(rig: Rig, d: Deployment) {
  const pids = {
    api: [d.api.pid],
    workers: d.workers.map((w) => w.pid),
    database: rig.dbPid ? [rig.dbPid] : [],
    load: [rig.loadgen.proc.pid, process.pid],
  };
  const read = () => ({
    ...(Object.fromEntries(
      Object.entries(pids).map(([k, list]) => [k, list.reduce((sum, pid) => sum + (cpuSeconds(pid) || 0), 0)]),
    ) as Record<keyof typeof pids, number>),
    machine: systemBusySeconds(),
  });
  const t0 = Date.now();
  const before = read();
  return (): Cores => {
    const after = read();
    const sec = (Date.now() - t0) / 1000;
    const cores = (k: keyof typeof before) => (after[k] - before[k]) / sec;
    const ours = cores('api') + cores('workers') + cores('database') + cores('load');
    return {
      api: cores('api'),
      workers: cores('workers'),
      database: rig.dbPid ? cores('database') : null,
      load: cores('load'),
      others: Math.max(0, cores('machine') - ours),
    };
  };
}

/** Cores used over a span: the API instance, the workers, the database server, load + receiver, everything else. */
interface Cores {
  api: number;
  workers: number;
  database: number | null;
  load: number;
  others: number;
}

interface MixResult {
  name: string;
  workers: number;
  load: LoadResult;
  /** Readings at the start, every 5 s, and when the load stopped. */
  samples: Counts[];
  cores: Cores;
  drain: Drain;
  /** After the drain. */
  final: Counts;
  /** Plants created and deleted by the load, as the database holds them. */
  changes: { created: number; deleted: number };
}

interface Drain {
  /** Pending when the load stopped. */
  backlog: number;
  seconds: number;
  delivered: number;
  left: number;
}

/** Waits until no delivery is pending, at most BENCH_DRAIN_SECONDS, checking that `running` still run. */
async function drain(rig: Rig, running: Spawned[]): Promise<Drain> {
  const t0 = Date.now();
  const received0 = rig.receiver.received();
  const backlog = await pendingNow(rig);
  let left = backlog;
  while (left > 0 && Date.now() - t0 < S.drainSec * 1000) {
    checkRunning(running);
    await sleep(500);
    left = await pendingNow(rig);
  }
  return { backlog, seconds: (Date.now() - t0) / 1000, delivered: rig.receiver.received() - received0, left };
}

/** The creates and deletes the mix made: its plants from CREATE_BASE up, and the seeded ones gone. */
async function changes(rig: Rig): Promise<{ created: number; deleted: number }> {
  const [[row]] = await rig.bench.conn.query<RowDataPacket[]>(
    `SELECT COALESCE(SUM(id >= ?), 0) AS created, COALESCE(SUM(id >= ? AND id < ?), 0) AS seeded
     FROM plants WHERE owner = ?`,
    [String(CREATE_BASE), String(POOL_BASE), String(POOL_BASE + BigInt(DELETE_POOL)), OWNER],
  );
  return { created: Number(row.created), deleted: DELETE_POOL - Number(row.seeded) };
}

/**
 * On a shared machine, waits (at most BENCH_QUIET_MAX_WAIT, 120 s) until processes outside the
 * benchmark use less than a sixth of a core over a second, so that a part does not start in the
 * middle of someone's test run.
 */
async function waitForQuiet(rig: Rig, d: Deployment): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const meter = cpuMeter(rig, d);
    await sleep(1000);
    const others = meter().others;
    if (others < 0.15) return;
    if (Date.now() - t0 > S.quietMaxWaitSec * 1000) {
      log(`other processes still use ${pct(others)} of a core: measuring anyway`);
      return;
    }
  }
}

/** The mix for the owner, with a reading every 5 s while it runs and one when it stops. */
async function mixWithReadings(
  rig: Rig,
  d: Deployment,
): Promise<{ load: LoadResult; samples: Counts[]; cores: Cores }> {
  const samples = [await readCounts(rig)];
  const cores = cpuMeter(rig, d);
  const running = rig.loadgen.run({
    url: API_URL,
    token: d.token,
    workload: { kind: 'mix', listPath: LIST_PATH, nextCreateId: String(CREATE_BASE), nextDeleteId: String(POOL_BASE) },
    connections: S.connections,
    durationSec: S.loadSec,
  });
  const stopped = running.then(
    () => true,
    () => true,
  );
  for (let k = 1; ; k++) {
    const done = await Promise.race([stopped, sleep(samples[0].at + k * INTERVAL_MS - Date.now()).then(() => false)]);
    const reading = await readCounts(rig);
    checkRunning([d.api, ...d.workers]);
    // The load's last moments belong to the interval before rather than to one of their own.
    if (done && reading.at - samples[samples.length - 1].at < 1000 && samples.length > 1) samples.pop();
    samples.push(reading);
    if (done) break;
  }
  const load = await running;
  return { load, samples, cores: cores() };
}

/** Part 1 and 2: the mix with the API instance delivering (`workers` 0) or beside `workers` workers. */
async function mixPart(rig: Rig, workers: number): Promise<MixResult> {
  const name = workers === 0 ? 'inline' : `workers-${workers}`;
  log(
    `mix, ${workers === 0 ? 'the API instance delivering' : `API at WEBHOOK_DELIVERY=false and ${workers} worker(s)`}`,
  );
  const d = await deploy(rig, name, workers === 0);
  try {
    startWorkers(rig, d, name, workers);
    await sleep(2000);
    checkRunning(d.workers);
    await waitForQuiet(rig, d);
    const { load, samples, cores } = await mixWithReadings(rig, d);
    const last = samples[samples.length - 1];
    log(
      `${load.rps.toFixed(0)} req/s, p99 ${load.latencyMs.p99.toFixed(1)} ms; ${last.recorded} events recorded, ` +
        `${last.received} received; ${last.pending} pending when the load stopped`,
    );
    const drained = await drain(rig, [d.api, ...d.workers]);
    log(`drained ${drained.delivered} in ${drained.seconds.toFixed(1)} s, ${drained.left} left`);
    return {
      name,
      workers,
      load,
      samples,
      cores,
      drain: drained,
      final: await readCounts(rig),
      changes: await changes(rig),
    };
  } finally {
    await undeploy(d);
  }
}

interface BacklogResult {
  workers: number;
  recorded: number;
  recordSec: number;
  /** From the workers' start to the first delivery received, to the last, and to no delivery pending. */
  firstSec: number;
  lastSec: number;
  drainedSec: number;
  left: number;
  received: number;
  delivered: number;
  cores: Cores;
}

/** BENCH_BACKLOG creates by the owner, through the API instance, which delivers nothing. */
async function recordBacklog(d: Deployment): Promise<number> {
  let next = CREATE_BASE;
  const t0 = Date.now();
  const result = await autocannon({
    url: `${API_URL}/plants`,
    connections: S.connections,
    amount: S.backlog,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: `{"id":${next++},"name":"bench plant","tag":"bench"}` }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`recording the backlog: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return (Date.now() - t0) / 1000;
}

/** Part 3: BENCH_BACKLOG events recorded with delivery off, the API stopped, then `workers` workers timed. */
async function backlogPart(rig: Rig, workers: number): Promise<BacklogResult> {
  const name = `backlog-${workers}`;
  log(`backlog: ${S.backlog} creates with delivery off, then ${workers} worker(s) deliver them`);
  const d = await deploy(rig, name, false);
  try {
    const received0 = rig.receiver.received();
    const recordSec = await recordBacklog(d);
    await stopProcess(d.api);
    await waitForQuiet(rig, d);
    const before = await readCounts(rig);
    if (before.pending !== before.recorded || before.received > received0)
      throw new Error(`with delivery off, ${before.recorded - before.pending} deliveries were made`);
    log(`${before.recorded} events recorded in ${recordSec.toFixed(1)} s; starting ${workers} worker(s)`);
    const arrivals = { first: NaN, last: NaN };
    const onRequest = () => {
      arrivals.last = performance.now();
      if (Number.isNaN(arrivals.first)) arrivals.first = arrivals.last;
    };
    rig.receiver.server.on('request', onRequest);
    const t0 = performance.now();
    startWorkers(rig, d, name, workers);
    const cores = cpuMeter(rig, d);
    const drained = await drain(rig, d.workers);
    const used = cores();
    rig.receiver.server.off('request', onRequest);
    const after = await readCounts(rig);
    const result: BacklogResult = {
      workers,
      recorded: before.recorded,
      recordSec,
      firstSec: (arrivals.first - t0) / 1000,
      lastSec: (arrivals.last - t0) / 1000,
      drainedSec: drained.seconds,
      left: drained.left,
      received: after.received - before.received,
      delivered: after.delivered,
      cores: used,
    };
    log(
      `${result.delivered} delivered, the first ${result.firstSec.toFixed(1)} s and the last ${result.lastSec.toFixed(1)} s ` +
        `after the start: ${rateOf(result).toFixed(0)} per second; ${result.left} left`,
    );
    return result;
  } finally {
    await undeploy(d);
  }
}

interface FairnessResult {
  name: string;
  /** WEBHOOK_SUBSCRIPTION_CONCURRENCY and WEBHOOK_OWNER_CONCURRENCY, or null for their defaults. */
  caps: number | null;
  /** Commit (the body's timestamp) to arrival at the healthy receiver, ms, one per event. */
  latenciesMs: number[];
  sent: number;
  /** Requests the tarpit was holding at the end, the most at once, and its deliveries still pending. */
  tarpitHeld: number;
  tarpitHeldMax: number;
  tarpitPending: number;
  pollIntervalMs: number;
}

/** An endpoint that takes every request and never answers: a receiver gone silent. */
async function startTarpit(): Promise<{ server: Server; url: string; held: () => number; most: () => number }> {
  const open = new Set<ServerResponse>();
  let most = 0;
  const server = createServer((req, res) => {
    req.resume();
    open.add(res);
    most = Math.max(most, open.size);
    res.on('close', () => open.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tarpit`;
  return { server, url, held: () => open.size, most: () => most };
}

/** An endpoint answering 204 at once that notes, for each delivery, how long after its commit it arrived. */
async function startTimedReceiver(): Promise<{ server: Server; url: string; latenciesMs: number[] }> {
  const latenciesMs: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrived = Date.now();
      res.writeHead(204).end();
      const timestamp = /"timestamp":"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
      if (timestamp) latenciesMs.push(arrived - Date.parse(timestamp));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthy`, latenciesMs };
}

/** `count` creates by the token's owner, through the API instance, as fast as it takes them. */
async function createMany(token: string, count: number, firstId: bigint): Promise<void> {
  let next = firstId;
  const result = await autocannon({
    url: `${API_URL}/plants`,
    connections: S.connections,
    amount: count,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: `{"id":${next++},"name":"tarpit plant"}` }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`creating: ${result.non2xx} non-2xx, ${result.errors} errors`);
}

/**
 * An event every 100 ms for BENCH_FAIRNESS_SECONDS, by the bench owner; then waits for their
 * deliveries (a few poll intervals at most, or the tarpit's timeout without shares). How many.
 */
async function healthyEvents(token: string, arrived: readonly number[]): Promise<number> {
  const deadline = Date.now() + S.fairnessSec * 1000;
  let sent = 0;
  for (let id = CREATE_BASE; Date.now() < deadline; id++) {
    const started = Date.now();
    const res = await fetch(`${API_URL}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"id":${id},"name":"healthy plant"}`,
    });
    if (res.status !== 200) throw new Error(`a healthy create answered ${res.status}`);
    sent += 1;
    await sleep(Math.max(0, 100 - (Date.now() - started)));
  }
  const waitUntil = Date.now() + 30_000;
  while (arrived.length < sent && Date.now() < waitUntil) await sleep(100);
  return sent;
}

/**
 * Part 4: a tarpit subscriber (another owner, its endpoint never answering) with
 * BENCH_TARPIT_BACKLOG events due, and the bench owner's subscription to an endpoint answering at
 * once getting an event every 100 ms for BENCH_FAIRNESS_SECONDS: how long after its commit each of
 * those arrives. `caps` sets both shares (null: their defaults).
 */
async function fairnessPart(rig: Rig, caps: number | null): Promise<FairnessResult> {
  const name = caps === null ? 'fairness' : 'fairness-uncapped';
  log(
    `fairness: a tarpit with ${S.tarpitBacklog} events due beside a healthy subscriber, shares ${caps ?? 'at their defaults'}`,
  );
  const tarpit = await startTarpit();
  const healthy = await startTimedReceiver();
  const cleanup = async () => {
    for (const server of [tarpit.server, healthy.server]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  };
  rig.cleanups.add(cleanup);
  const capsEnv =
    caps === null ? {} : { WEBHOOK_SUBSCRIPTION_CONCURRENCY: String(caps), WEBHOOK_OWNER_CONCURRENCY: String(caps) };
  const { bench } = rig;
  await recreateDatabase(bench.conn, bench.db.database);
  const deployEnv: NodeJS.ProcessEnv = {
    ...serviceEnvironment(bench.db, bench.version),
    PORT: String(S.portBase),
    LOG_LEVEL,
    ...webhookEnvironment(),
    ...capsEnv,
  };
  const token = await issueToken(ROOT, deployEnv, OWNER);
  const tarpitToken = await issueToken(ROOT, deployEnv, 'bench-tarpit');
  const api = startProcess('service', startProdArgv(ROOT), {
    env: deployEnv,
    cwd: ROOT,
    cpus: bench.serviceCpus,
    logPath: join(OUT, `webhook-delivery-${name}-service.log`),
  });
  try {
    await waitForHttp(`${API_URL}/health/live`, api);
    await subscribe(S.portBase, tarpitToken, tarpit.url);
    await subscribe(S.portBase, token, healthy.url);
    await createMany(tarpitToken, S.tarpitBacklog, CREATE_BASE);
    // The tarpit's attempts start and hold their slots before the measured events.
    await sleep(3000);
    const sent = await healthyEvents(token, healthy.latenciesMs);
    checkRunning([api]);
    const [[row]] = await bench.conn.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
       WHERE s.owner = 'bench-tarpit' AND d.state = 'pending'`,
    );
    const result: FairnessResult = {
      name,
      caps,
      latenciesMs: [...healthy.latenciesMs],
      sent,
      tarpitHeld: tarpit.held(),
      tarpitHeldMax: tarpit.most(),
      tarpitPending: Number(row.n),
      pollIntervalMs: 1000,
    };
    const p = percentiles(result.latenciesMs);
    log(
      `${result.latenciesMs.length} of ${sent} healthy events delivered: p50 ${p.p50} ms, p99 ${p.p99} ms, max ${p.max} ms; ` +
        `the tarpit held ${result.tarpitHeldMax} requests at most`,
    );
    return result;
  } finally {
    await stopProcess(api);
    await cleanup();
  }
}

/** Nearest-rank percentiles of a sample, in whole ms. */
function percentiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { p50: Math.round(rank(0.5)), p99: Math.round(rank(0.99)), max: Math.round(sorted[sorted.length - 1] ?? NaN) };
}

function fairnessTable(results: FairnessResult[]): string[] {
  const target = (r: FairnessResult) => 2 * r.pollIntervalMs;
  return [
    '| shares (subscription / owner) | healthy events delivered | commit → delivery p50 | p99 | max | target: p99 within 2 × the poll interval + response | tarpit: requests held at most | tarpit deliveries still pending |',
    '|---|---:|---:|---:|---:|---|---:|---:|',
    ...results.map((r) => {
      const p = percentiles(r.latenciesMs);
      const shares = r.caps === null ? 'the defaults (32 / 64)' : `${r.caps} / ${r.caps} (no share: every slot)`;
      const verdict = p.p99 <= target(r) ? 'PASS' : 'FAIL';
      return (
        `| ${shares} | ${r.latenciesMs.length} of ${r.sent} | ${p.p50} ms | ${p.p99} ms | ${p.max} ms | ` +
        `${verdict} (${target(r)} ms + about 1 ms) | ${r.tarpitHeldMax} | ${int(r.tarpitPending)} |`
      );
    }),
  ];
}

/** Deliveries per second of a backlog, from the first received to the last. */
const rateOf = (r: BacklogResult) => r.delivered / (r.lastSec - r.firstSec);

const perSecond = (n: number, ms: number) => (ms > 0 ? n / (ms / 1000) : NaN);
const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const pct = (n: number | null) => (n === null ? 'n/a' : `${(n * 100).toFixed(0)}%`);
const cpu = (c: Cores, workers: boolean) =>
  `${workers ? `workers ${pct(c.workers)}` : `API ${pct(c.api)}`}${workers && c.api > 0.005 ? `, API ${pct(c.api)}` : ''}, ` +
  `database ${pct(c.database)}, load and receiver ${pct(c.load)}, others ${pct(c.others)}`;

function mixLabel(r: MixResult): string {
  return r.workers === 0
    ? 'the API instance'
    : `${r.workers} worker${r.workers > 1 ? 's' : ''} (API: WEBHOOK_DELIVERY=false)`;
}

function drainText(d: Drain): string {
  if (d.backlog === 0) return 'nothing pending';
  const done =
    d.left === 0
      ? `drained in ${d.seconds.toFixed(1)} s`
      : `${int(d.left)} still pending after ${d.seconds.toFixed(0)} s`;
  return `${done} (${int(perSecond(d.delivered, d.seconds * 1000))}/s)`;
}

/** One row per mix part: throughput, p99, events recorded against delivered over the load, and the backlog. */
function mixSummary(results: MixResult[]): string[] {
  return [
    '| deliveries by | req/s | p99 ms | events recorded/s | delivered/s (receiver) | delivered/s (rows) | delivered ÷ recorded | pending when the load stopped | after the load | CPU during the load (share of a core) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...results.map((r) => {
      const [first, last] = [r.samples[0], r.samples[r.samples.length - 1]];
      const ms = last.at - first.at;
      const recorded = perSecond(last.recorded - first.recorded, ms);
      const received = perSecond(last.received - first.received, ms);
      return (
        `| ${mixLabel(r)} | ${int(r.load.rps)} | ${r.load.latencyMs.p99.toFixed(1)} | ${int(recorded)} | ${int(received)} | ` +
        `${int(perSecond(last.delivered - first.delivered, ms))} | ${(received / recorded).toFixed(2)} | ${int(last.pending)} | ` +
        `${drainText(r.drain)} | ${cpu(r.cores, r.workers > 0)} |`
      );
    }),
  ];
}

function intervalTable(r: MixResult): string[] {
  const t0 = r.samples[0].at;
  return [
    `Every 5 s, deliveries by ${mixLabel(r)}:`,
    '',
    '| s | recorded/s | delivered/s (receiver) | delivered/s (rows) | pending at the end |',
    '|---:|---:|---:|---:|---:|',
    ...r.samples.slice(1).map((s, i) => {
      const prev = r.samples[i];
      const ms = s.at - prev.at;
      return (
        `| ${((s.at - t0) / 1000).toFixed(0)} | ${int(perSecond(s.recorded - prev.recorded, ms))} | ` +
        `${int(perSecond(s.received - prev.received, ms))} | ${int(perSecond(s.delivered - prev.delivered, ms))} | ${int(s.pending)} |`
      );
    }),
  ];
}

/** What a part's figures rest on: answers other than 2xx, events against the creates and deletes, duplicates. */
function mixChecks(r: MixResult): string {
  const status = Object.entries(r.load.status)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  return (
    `${mixLabel(r)}: answers ${status}${r.load.errors ? `, ${r.load.errors} errors` : ''}; ${int(r.final.recorded)} events recorded ` +
    `for ${int(r.changes.created)} plants created and ${int(r.changes.deleted)} deleted; ${int(r.final.delivered)} rows delivered, ` +
    `${int(r.final.received - r.samples[0].received)} requests received.`
  );
}

function backlogTable(results: BacklogResult[]): string[] {
  return [
    '| workers | events | recorded in (creates/s) | first delivery after the start | nothing pending after the start | deliveries/s (first to last) | requests received | CPU while draining (share of a core) |',
    '|---:|---:|---|---:|---:|---:|---:|---|',
    ...results.map(
      (r) =>
        `| ${r.workers} | ${int(r.recorded)} | ${r.recordSec.toFixed(1)} s (${int(r.recorded / r.recordSec)}) | ${r.firstSec.toFixed(1)} s | ` +
        `${r.left === 0 ? `${r.drainedSec.toFixed(1)} s` : `${int(r.left)} left after ${r.drainedSec.toFixed(0)} s`} | ` +
        `${int(rateOf(r))} | ${int(r.received)} | ${cpu(r.cores, true)} |`,
    ),
  ];
}

function report(
  mixes: MixResult[],
  backlogs: BacklogResult[],
  fairness: FairnessResult[],
  notes: string[],
  facts: Record<string, string>,
): string {
  const lines: string[] = [];
  if (fairness.length > 0) lines.push(...fairnessTable(fairness), '');
  if (mixes.length > 0) {
    lines.push(...mixSummary(mixes), '');
    for (const r of mixes) lines.push(...intervalTable(r), '');
    lines.push(...mixes.map((r) => `- ${mixChecks(r)}`), '');
  }
  if (backlogs.length > 0) lines.push(...backlogTable(backlogs), '');
  lines.push(...notes.map((n) => `- ${n}`));
  lines.push(
    '',
    `Settings: ${Object.entries(facts)
      .map(([k, v]) => `${k}: ${v}`)
      .join('; ')}.`,
  );
  return lines.join('\n');
}

async function facts(rig: Rig): Promise<Record<string, string>> {
  const commit = (await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT })).stdout.trim();
  return {
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    commit,
    'Node.js': process.version,
    database: rig.bench.version,
    'API instance': `\`${startProdArgv(ROOT).slice(1).join(' ')}\``,
    worker: rig.worker ? `\`${rig.worker.slice(1).join(' ')}\`` : 'none in this build',
    environment: `NODE_ENV=production, LOG_LEVEL=${LOG_LEVEL}, WEBHOOK_CONCURRENCY and WEBHOOK_POLL_INTERVAL_MS at their defaults`,
    load: `the mix (per connection 16 lists, 3 creates, 1 delete), ${S.connections} connections, ${S.loadSec} s, one owner with 1,000 plants and one subscription to both events`,
    backlog: `${S.backlog} creates, ${S.connections} connections`,
    fairness: `${S.tarpitBacklog} events due to an endpoint that never answers (WEBHOOK_TIMEOUT_MS at its default), an event every 100 ms for ${S.fairnessSec} s to one answering 204`,
    pinning: rig.bench.pin
      ? `the API instance and the workers on CPU 0; the database server${rig.dbPid ? '' : ' (not found, not pinned)'}, load generator, receiver and driver on CPU 1`
      : 'none',
  };
}

async function main(): Promise<void> {
  const cleanups = new Cleanups();
  const bench = await prepareStandalone(S);
  // The fairness part times latencies, not CPU: it leaves the database server's affinity as it is.
  const dbPid = S.parts.some((part) => part !== 'fairness') ? await pinDatabase(bench, cleanups) : null;
  const receiver = await startReceiver();
  cleanups.add(async () => {
    receiver.server.close();
    receiver.server.closeAllConnections();
  });
  const loadgen = LoadGenerator.start(bench.pin ? '1' : undefined);
  cleanups.add(() => loadgen.stop());
  const rig: Rig = { bench, receiver, loadgen, dbPid, worker: workerArgv(), cleanups };
  const mixes: MixResult[] = [];
  const backlogs: BacklogResult[] = [];
  const fairness: FairnessResult[] = [];
  const notes: string[] = [];
  let described: Record<string, string>;
  try {
    if (S.parts.includes('inline')) mixes.push(await mixPart(rig, 0));
    if (rig.worker === null) {
      notes.push('This build has no `npm run start:worker`: the parts with workers did not run.');
    } else {
      if (S.parts.includes('workers')) for (const n of [1, 2]) mixes.push(await mixPart(rig, n));
      if (S.parts.includes('backlog')) for (const n of [1, 2]) backlogs.push(await backlogPart(rig, n));
    }
    if (S.parts.includes('fairness')) {
      fairness.push(await fairnessPart(rig, null));
      // Shares as wide as every slot: one subscription may take them all, as claims did before shares.
      fairness.push(await fairnessPart(rig, 128));
    }
  } catch (error) {
    // What was measured before the failure is still reported, with the failure.
    log(String((error as Error).stack ?? error));
    notes.push(`The run stopped early: ${(error as Error).message}`);
  } finally {
    described = await facts(rig);
    await cleanups.runAll();
  }
  await finishStandalone(bench, join(OUT, 'webhook-delivery.md'), report(mixes, backlogs, fairness, notes, described));
}

runMain(main);
