/**
 * Load generation for `npm run bench`: the load generator (bench/loadgen.ts, a child process spoken
 * to over IPC), one measured run of one target with its SQL counters, CPU and memory, and the pools
 * of seeded ids that deletes consume.
 */
import { join } from 'node:path';
import { COUNTERS, diffCounters, readCounters, seedRange } from '../lib/db';
import { ROOT, OUT } from '../lib/harness';
import { Spawned, cpuSeconds, sampleRss, sleep, startProcess, stopProcess } from '../lib/sys';
import { cpuPerResponseUs } from '../lib/report';
import { RoundResult, TARGET_LABEL, TargetName } from '../lib/types';
import type { LoadJob, LoadResult, Workload } from '../loadgen';
import type { Context, Target } from './context';
import { othersMeter, waitForQuiet } from './quiet';
import { BENCH_JS, POOL_BASE, S } from './settings';

export class LoadGenerator {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  constructor(readonly proc: Spawned) {
    proc.child.on('message', (message: { seq: number; result?: LoadResult; error?: string }) => {
      const waiter = this.pending.get(message.seq);
      this.pending.delete(message.seq);
      if (message.error || !message.result) waiter?.reject(new Error(`load generator: ${message.error}`));
      else waiter?.resolve(message.result);
    });
    void proc.exited.then((code) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
  }

  /** Starts the load generator process, on CPU 1 when pinned; `stop` ends it. */
  static start(cpus: string | undefined): LoadGenerator {
    const proc = startProcess('load generator', [process.execPath, join(BENCH_JS, 'loadgen.js')], {
      env: { PATH: process.env.PATH, NODE_ENV: 'production' },
      cwd: ROOT,
      cpus,
      logPath: join(OUT, 'loadgen.log'),
      ipc: true,
    });
    return new LoadGenerator(proc);
  }

  async stop(): Promise<void> {
    if (this.proc.child.connected) this.proc.child.disconnect();
    await stopProcess(this.proc, 'SIGTERM', 3000);
  }

  run(job: LoadJob): Promise<LoadResult> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.proc.child.send({ seq, job });
    });
  }
}

export function job(
  ctx: Context,
  target: Target,
  user: string,
  workload: Workload,
  durationSec: number,
  connections = S.connections,
): LoadJob {
  return { url: target.url, token: ctx.tokens[user], workload, connections, durationSec };
}

/** One measured run: after the quiet gate, the load with the SQL counters, CPU and memory around it. */
export async function measure(ctx: Context, target: Target, round: number, job: LoadJob): Promise<RoundResult> {
  await waitForQuiet(ctx);
  const before = await readCounters(ctx.conn);
  const others = othersMeter(ctx);
  const t0 = Date.now();
  const cpu0 = {
    target: cpuSeconds(target.proc.pid),
    db: ctx.dbPid ? cpuSeconds(ctx.dbPid) : NaN,
    loadgen: cpuSeconds(ctx.loadgen.proc.pid),
  };
  const rss = sampleRss(target.proc.pid);
  const load = await ctx.loadgen.run(job);
  const rssMaxMb = rss.stop();
  const wall = (Date.now() - t0) / 1000;
  const targetSec = cpuSeconds(target.proc.pid) - cpu0.target;
  const dbSec = ctx.dbPid ? cpuSeconds(ctx.dbPid) - cpu0.db : null;
  const cpu = {
    target: targetSec / wall,
    targetSec,
    db: dbSec === null ? null : dbSec / wall,
    dbSec,
    loadgen: (cpuSeconds(ctx.loadgen.proc.pid) - cpu0.loadgen) / wall,
    others: others(),
  };
  await sleep(300); // requests still in flight when the load stopped reach the database
  const after = await readCounters(ctx.conn);
  const sql = diffCounters(after, before, ctx.baseline.selfCost);
  const sqlPerRequest = Object.fromEntries(
    COUNTERS.map((c) => [c, sql[c] / Math.max(1, load.sent)]),
  ) as RoundResult['sqlPerRequest'];
  ctx.rpsSeen.set(target.name, Math.max(ctx.rpsSeen.get(target.name) ?? 0, load.rps));
  return { round, target: target.name, load, sql, sqlPerRequest, rssMaxMb, cpu };
}

const LABEL_WIDTH = Math.max(...Object.values(TARGET_LABEL).map((label) => label.length));

/** One line of the progress log for a measured run. */
export function describe(r: RoundResult): string {
  const l = r.load.latencyMs;
  const statuses = Object.entries(r.load.status)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
  return (
    `${TARGET_LABEL[r.target].padEnd(LABEL_WIDTH)} ${Math.round(r.load.rps).toString().padStart(6)} req/s  p50 ${l.p50.toFixed(2)} ms  p99 ${l.p99.toFixed(2)} ms  slowest ${l.max.toFixed(1)} ms  ` +
    `${cpuPerResponseUs(r).toFixed(0)} µs CPU/req  ${r.sqlPerRequest.Questions.toFixed(3)} SQL/req  RSS ${r.rssMaxMb.toFixed(0)} MB  CPU ${(r.cpu.target * 100).toFixed(0)}%  others ${(r.cpu.others * 100).toFixed(0)}%  [${statuses}${r.load.errors ? ` errors×${r.load.errors}` : ''}]`
  );
}

/** Seeds ids for `owner` to delete until at least `needed` wait in its pool. */
export async function ensurePool(ctx: Context, owner: string, needed: number): Promise<void> {
  const pool = ctx.pools.get(owner) ?? { next: POOL_BASE, end: POOL_BASE };
  ctx.pools.set(owner, pool);
  let missing = needed - Number(pool.end - pool.next);
  if (missing <= 0) return;
  missing += 1000;
  while (missing > 0) {
    const batch = Math.min(missing, 999_999);
    await seedRange(ctx.conn, owner, pool.end, batch);
    pool.end += BigInt(batch);
    missing -= batch;
  }
  await sleep(500); // let the server settle after the bulk insert
}

/** How many deletes a target may issue in `sec` seconds at `share` of its requests, generously. */
export function deleteBudget(ctx: Context, target: TargetName, sec: number, share: number): number {
  const rps = ctx.rpsSeen.get(target) ?? 20_000;
  return share === 0 ? 0 : Math.ceil(rps * 1.6 * sec * share) + S.connections * 4;
}
