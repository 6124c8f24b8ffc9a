/**
 * Memory under the mix: one instance of the build, as production starts it (the `npm run start:prod`
 * command line, NODE_ENV=production, the default LOG_LEVEL=info, MySQL/MariaDB, metrics on their own
 * listener), under the mix of `npm run bench` (per 20 requests: 16 lists, 3 creates, 1 delete) for
 * BENCH_SOAK_SECONDS (600 s) without a pause. The owner has one webhook subscription (plant.created
 * and plant.deleted) to a receiver in this process that answers 204, so every create and delete also
 * records a delivery and the instance sends it while it serves the load.
 *
 * Every BENCH_SOAK_SAMPLE seconds (10 s) it reads the instance's VmRSS, its heap in use (from its own
 * /metrics, as Prometheus would scrape it), its open file descriptors (/proc/PID/fd), its CPU, and the
 * throughput, p99 and deliveries of that interval. The verdict, "under 200 MB resident and flat":
 * every sample below 200 MB, the least-squares slope of VmRSS over the second half within ±1 MB per
 * minute, and the median of the last minute within 10% of the median of minutes 2 and 3 (the first
 * minute is warm-up: the JIT, the pools and the caches fill).
 *
 *   npm run bench:soak     # BENCH_SOAK_SECONDS (600), BENCH_SOAK_SAMPLE (10s), BENCH_CONNECTIONS (16)
 */
import autocannon from 'autocannon';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { seedRange } from './lib/db';
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
  startProdArgv,
} from './lib/harness';
import { spread } from './lib/report';
import {
  Spawned,
  cpuSeconds,
  findDatabasePid,
  readMemory,
  startProcess,
  stopProcess,
  systemBusySeconds,
  waitForHttp,
} from './lib/sys';
import { startReceiver, subscribe, webhookEnvironment } from './lib/webhooks';
import { buildRequests } from './loadgen';
import { CREATE_BASE, PLANTS_PER_USER, POOL_BASE } from './run/settings';

const env = process.env;
const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_soak',
  soakSec: seconds(env.BENCH_SOAK_SECONDS, 600),
  sampleSec: seconds(env.BENCH_SOAK_SAMPLE, 10),
  connections: integer(env.BENCH_CONNECTIONS, 16),
  portBase: integer(env.BENCH_PORT_BASE, 3341),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
};
const USER = 'bench-soak';
/** Seeded ids for the deletes: room for 6,000 requests a second (a delete in 20) for the whole run. */
const DELETE_POOL = Math.ceil(S.soakSec * 300);
const LIMIT_MB = 200;
const SLOPE_MB_PER_MIN = 1;
const DRIFT = 0.1;

interface Sample {
  /** Seconds since the load started, at the end of the interval. */
  t: number;
  rssMb: number;
  heapUsedMb: number;
  fds: number;
  rps: number;
  p99Ms: number;
  /** Answers other than 2xx, and socket errors, in the interval. */
  failures: number;
  deliveriesPerSec: number;
  /** Cores the service used; and what processes outside the benchmark used. */
  serviceCpu: number;
  othersCpu: number;
}

/** The heap in use, from the instance's own Prometheus metrics (prom-client's default metrics). */
async function heapUsedMb(metricsPort: number): Promise<number> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const m = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([\d.e+]+)/m.exec(text);
    return m ? Number(m[1]) / 2 ** 20 : NaN;
  } catch {
    return NaN;
  }
}

function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** What one interval of the load brought: its responses' latencies, failures, and the CPU spent. */
class Interval {
  latencies: number[] = [];
  failures = 0;
  private cpu0: { service: number; ours: number; busy: number; at: number };

  constructor(
    private readonly pids: number[],
    private readonly servicePid: number,
  ) {
    this.cpu0 = this.cpuNow();
  }

  private cpuNow() {
    const self = process.cpuUsage();
    return {
      service: cpuSeconds(this.servicePid),
      ours: this.pids.reduce((sum, pid) => sum + (cpuSeconds(pid) || 0), 0) + (self.user + self.system) / 1e6,
      busy: systemBusySeconds(),
      at: Date.now(),
    };
  }

  /** Cores the service used and cores processes outside the benchmark used, since the interval began. */
  cpu(): { service: number; others: number } {
    const now = this.cpuNow();
    const sec = (now.at - this.cpu0.at) / 1000;
    return {
      service: (now.service - this.cpu0.service) / sec,
      others: Math.max(0, (now.busy - this.cpu0.busy - (now.ours - this.cpu0.ours)) / sec),
    };
  }
}

function p99(latencies: number[]): number {
  const sorted = Float64Array.from(latencies).sort();
  return sorted.length ? sorted[Math.ceil(0.99 * sorted.length) - 1] : NaN;
}

/** The mix for BENCH_SOAK_SECONDS, with a sample every BENCH_SOAK_SAMPLE seconds. */
async function soak(service: Spawned, token: string, received: () => number): Promise<Sample[]> {
  const { requests } = buildRequests({
    kind: 'mix',
    listPath: LIST_PATH,
    nextCreateId: String(CREATE_BASE),
    nextDeleteId: String(POOL_BASE),
  });
  const pids = [service.pid, ...[findDatabasePid(null)].filter((pid): pid is number => pid !== null)];
  let current = new Interval(pids, service.pid);
  const samples: Sample[] = [];
  const t0 = Date.now();
  let received0 = received();
  const expected = Math.floor(S.soakSec / S.sampleSec);
  const take = async () => {
    if (samples.length >= expected) return;
    const done = current;
    current = new Interval(pids, service.pid);
    const sec = S.sampleSec;
    const cpu = done.cpu();
    const delivered = received();
    samples.push({
      t: Math.round((Date.now() - t0) / 1000),
      rssMb: readMemory(service.pid)?.rssMb ?? NaN,
      heapUsedMb: await heapUsedMb(S.portBase + 1),
      fds: openFds(service.pid),
      rps: done.latencies.length / sec,
      p99Ms: p99(done.latencies),
      failures: done.failures,
      deliveriesPerSec: (delivered - received0) / sec,
      serviceCpu: cpu.service,
      othersCpu: cpu.others,
    });
    received0 = delivered;
    const s = samples[samples.length - 1];
    log(
      `${s.t} s: RSS ${s.rssMb.toFixed(1)} MB, heap ${s.heapUsedMb.toFixed(1)} MB, ${s.fds} fds, ${s.rps.toFixed(0)} req/s, p99 ${s.p99Ms.toFixed(1)} ms, ` +
        `${s.deliveriesPerSec.toFixed(0)} deliveries/s, others ${(s.othersCpu * 100).toFixed(0)}% of a core${s.failures ? `, ${s.failures} failures` : ''}`,
    );
  };
  const timer = setInterval(() => void take(), S.sampleSec * 1000);
  log(`soak: the mix for ${S.soakSec} s on ${S.connections} connections, a sample every ${S.sampleSec} s`);
  await new Promise<void>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${S.portBase}`,
        connections: S.connections,
        // A second past the last sample, so that no interval ends in an idle instant.
        duration: S.soakSec + 1,
        timeout: 10,
        headers: { authorization: `Bearer ${token}` },
        requests,
      },
      (error: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve()),
    );
    instance.on('response', (_client: autocannon.Client, status: number, _bytes: number, ms: number) => {
      current.latencies.push(ms);
      if (status < 200 || status >= 300) current.failures++;
    });
    instance.on('reqError', () => current.failures++);
  });
  clearInterval(timer);
  return samples;
}

/** Least-squares slope of VmRSS against time, in MB per minute. */
function slopeMbPerMin(samples: Sample[]): number {
  const n = samples.length;
  const mx = samples.reduce((s, x) => s + x.t / 60, 0) / n;
  const my = samples.reduce((s, x) => s + x.rssMb, 0) / n;
  const sxy = samples.reduce((s, x) => s + (x.t / 60 - mx) * (x.rssMb - my), 0);
  const sxx = samples.reduce((s, x) => s + (x.t / 60 - mx) ** 2, 0);
  return sxx > 0 ? sxy / sxx : NaN;
}

interface Verdict {
  maxRssMb: number;
  slope: number;
  early: number;
  last: number;
  /** Each condition on its own: below the limit, the slope, the drift. */
  under: boolean;
  level: boolean;
  steady: boolean;
  pass: boolean | null;
}

function verdict(samples: Sample[]): Verdict {
  const maxRssMb = Math.max(...samples.map((s) => s.rssMb));
  const slope = slopeMbPerMin(samples.filter((s) => s.t > S.soakSec / 2));
  const median = (from: number, to: number) =>
    spread(samples.filter((s) => s.t > from && s.t <= to).map((s) => s.rssMb)).median;
  const early = median(60, 180);
  const last = median(S.soakSec - 60, S.soakSec + S.sampleSec);
  const under = maxRssMb < LIMIT_MB;
  const level = Math.abs(slope) <= SLOPE_MB_PER_MIN;
  const steady = Math.abs(last / early - 1) <= DRIFT;
  // Minutes 2 and 3 and a last minute after them need at least 4 minutes.
  const pass = S.soakSec < 240 || !Number.isFinite(early) ? null : under && level && steady;
  return { maxRssMb, slope, early, last, under, level, steady, pass };
}

const yes = (ok: boolean) => (ok ? 'yes' : 'no');

function sampleRow(s: Sample): string {
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  return `| ${s.t} | ${f(s.rssMb)} | ${f(s.heapUsedMb)} | ${s.fds} | ${f(s.rps, 0)} | ${f(s.p99Ms)} | ${f(s.deliveriesPerSec, 0)} | ${s.failures} | ${f(s.serviceCpu * 100, 0)}% | ${f(s.othersCpu * 100, 0)}% |`;
}

interface Outcome {
  samples: Sample[];
  hwmMb: number;
  backlog: number;
  version: string;
  pin: boolean;
}

function report({ samples, hwmMb, backlog, version, pin }: Outcome): string {
  const v = verdict(samples);
  const perMinute = Math.max(1, Math.round(60 / S.sampleSec));
  const head = [
    '| s | VmRSS MB | heap used MB | open fds | req/s | p99 ms | deliveries/s | failures | service CPU | others CPU |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const others = spread(samples.map((s) => s.othersCpu * 100));
  const rps = spread(samples.map((s) => s.rps));
  const failures = samples.reduce((sum, s) => sum + s.failures, 0);
  const fds = spread(samples.map((s) => s.fds));
  const result = v.pass === null ? 'no verdict (the run is shorter than 4 minutes)' : v.pass ? 'PASS' : 'FAIL';
  return [
    `One sample a minute (every ${S.sampleSec} s in the collapsed table below):`,
    '',
    ...head,
    ...samples.filter((_, i) => (i + 1) % perMinute === 0).map(sampleRow),
    '',
    `<details><summary>Every sample</summary>`,
    '',
    ...head,
    ...samples.map(sampleRow),
    '',
    '</details>',
    '',
    `- Max VmRSS sampled: ${v.maxRssMb.toFixed(1)} MB (VmHWM, the peak since start: ${hwmMb.toFixed(1)} MB).`,
    `- VmRSS slope over the second half (least squares): ${v.slope >= 0 ? '+' : ''}${v.slope.toFixed(2)} MB/min.`,
    `- Median VmRSS of minutes 2–3: ${v.early.toFixed(1)} MB; of the last minute: ${v.last.toFixed(1)} MB (${((v.last / v.early - 1) * 100).toFixed(1)}%).`,
    `- Open file descriptors: ${fds.min}–${fds.max}. Throughput ${rps.median.toFixed(0)} req/s median [${rps.min.toFixed(0)}–${rps.max.toFixed(0)}]; ${failures} failures (non-2xx or socket errors); ${backlog} deliveries still pending when the load stopped.`,
    `- Processes outside the benchmark used a median ${others.median.toFixed(0)}% of a core (max ${others.max.toFixed(0)}%).`,
    `- **Under ${LIMIT_MB} MB resident and flat: ${result}** (every sample below ${LIMIT_MB} MB: ${yes(v.under)}; slope of the second half within ±${SLOPE_MB_PER_MIN} MB/min: ${yes(v.level)}; last-minute median within ${DRIFT * 100}% of the median of minutes 2–3: ${yes(v.steady)}).`,
    '',
    `Settings: the mix (16 lists of \`${LIST_PATH}\` of an owner of ${PLANTS_PER_USER.toLocaleString('en-US')} plants, 3 creates, 1 delete per 20 requests) for ${S.soakSec} s on ${S.connections} connections, ` +
      `the owner subscribed to plant.created and plant.deleted at a receiver in the load process answering 204, ` +
      `\`${startProdArgv(ROOT).slice(1).join(' ')}\`, NODE_ENV=production, LOG_LEVEL=info, metrics on their own port (scraped every sample), Node.js ${process.version}, ${version}, ` +
      `${pin ? 'the service on CPU 0, load, receiver and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
}

/** Deliveries the instance had not sent yet. */
async function pendingDeliveries(bench: Standalone): Promise<number> {
  const [[row]] = (await bench.conn.query(
    `SELECT COUNT(*) AS n FROM \`${bench.db.database}\`.webhook_deliveries WHERE state = 'pending'`,
  )) as unknown as [[{ n: number }]];
  return Number(row.n);
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const receiver = await startReceiver();
  const serviceEnv: NodeJS.ProcessEnv = {
    ...serviceEnvironment(bench.db, bench.version),
    PORT: String(S.portBase),
    METRICS_PORT: String(S.portBase + 1),
    LOG_LEVEL: 'info',
    ...webhookEnvironment(),
  };
  const token = await issueToken(ROOT, serviceEnv, USER);
  const service = startProcess('service', startProdArgv(ROOT), {
    env: serviceEnv,
    cwd: ROOT,
    cpus: bench.serviceCpus,
    logPath: join(OUT, 'soak-service.log'),
  });
  let outcome: Outcome;
  try {
    await waitForHttp(`http://127.0.0.1:${S.portBase}/health/live`, service);
    await subscribe(S.portBase, token, receiver.url);
    log(`seeding ${PLANTS_PER_USER} plants to list and ${DELETE_POOL} to delete`);
    await seedRange(bench.conn, USER, 1n, PLANTS_PER_USER);
    await seedRange(bench.conn, USER, POOL_BASE, DELETE_POOL);
    const samples = await soak(service, token, receiver.received);
    const hwmMb = readMemory(service.pid)?.hwmMb ?? NaN;
    outcome = { samples, hwmMb, backlog: await pendingDeliveries(bench), version: bench.version, pin: bench.pin };
  } finally {
    await stopProcess(service);
    receiver.server.close();
  }
  await finishStandalone(bench, join(OUT, 'soak.md'), report(outcome));
}

runMain(main);
