/**
 * The quiet gate: how much CPU processes outside the benchmark use, and waiting for them to
 * quiet down before a measured run.
 */
import { log } from '../lib/harness';
import { cpuSeconds, sleep, systemBusySeconds } from '../lib/sys';
import type { Context } from './context';
import { S } from './settings';

/** CPU seconds of every process of the benchmark: targets, load generator, database, this driver. */
function ourCpuSeconds(ctx: Context): number {
  const pids = [
    ...ctx.targets.map((t) => t.proc.pid),
    ...ctx.extraPids,
    ctx.loadgen.proc.pid,
    process.pid,
    ...(ctx.dbPid ? [ctx.dbPid] : []),
  ];
  return pids.reduce((sum, pid) => sum + (cpuSeconds(pid) || 0), 0);
}

/** A reading to compute, later, how many cores processes outside the benchmark used meanwhile. */
export function othersMeter(ctx: Context): () => number {
  const busy0 = systemBusySeconds();
  const ours0 = ourCpuSeconds(ctx);
  const t0 = Date.now();
  return () => Math.max(0, (systemBusySeconds() - busy0 - (ourCpuSeconds(ctx) - ours0)) / ((Date.now() - t0) / 1000));
}

/**
 * On a shared machine, waits (up to BENCH_QUIET_MAX_WAIT) until processes outside the benchmark
 * use less than BENCH_QUIET_THRESHOLD cores over a second, so a round does not start in the
 * middle of someone's test run.
 */
export async function waitForQuiet(ctx: Context): Promise<void> {
  if (!S.quiet || ctx.quietWaitSec >= S.quietBudgetSec) return;
  const t0 = Date.now();
  let announced = false;
  for (;;) {
    const meter = othersMeter(ctx);
    await sleep(1000);
    const others = meter();
    if (others < S.quietThreshold) break;
    if (!announced) log(`waiting for other processes to quiet down (they use ${(others * 100).toFixed(0)}% of a core)`);
    announced = true;
    if (Date.now() - t0 > S.quietMaxWaitSec * 1000 || ctx.quietWaitSec + (Date.now() - t0) / 1000 >= S.quietBudgetSec) {
      log(`still busy after ${S.quietMaxWaitSec}s: measuring anyway`);
      ctx.busyStarts++;
      break;
    }
  }
  ctx.quietWaitSec += (Date.now() - t0) / 1000;
}
