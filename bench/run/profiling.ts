/**
 * The profile: a second instance of the service under a scenario's load with V8's sampling profiler
 * (profile-hook.ts), self time summed by package and by function.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { OUT, ROOT, log } from '../lib/harness';
import { summarizeProfile } from '../lib/profile';
import { sleep, startProcess, stopProcess, waitForHttp } from '../lib/sys';
import { BenchResults } from '../lib/types';
import type { Context, Target } from './context';
import { deleteBudget, ensurePool, job } from './load';
import { waitForQuiet } from './quiet';
import { ScenarioSpec, scenarioNamed } from './scenarios';
import { BENCH_JS, S, START_PROD, nodeCommand } from './settings';

async function profileService(
  ctx: Context,
  serviceEnv: NodeJS.ProcessEnv,
  spec: ScenarioSpec,
  cpus: string | undefined,
): Promise<ReturnType<typeof summarizeProfile> | null> {
  const file = join(OUT, `profile-${spec.name}.cpuprofile`);
  rmSync(file, { force: true });
  const port = S.portBase + 10;
  const proc = startProcess(
    `profiled service (${spec.name})`,
    nodeCommand('-r', join(BENCH_JS, 'profile-hook.js'), START_PROD.script),
    {
      env: { ...serviceEnv, PORT: String(port), BENCH_PROFILE_OUT: file },
      cwd: ROOT,
      cpus,
      logPath: join(OUT, `profile-${spec.name}.log`),
    },
  );
  ctx.extraPids.add(proc.pid);
  try {
    const target: Target = { name: 'service', proc, url: `http://127.0.0.1:${port}` };
    await waitForHttp(`${target.url}/plants`, proc);
    if (spec.deleteShare > 0)
      await ensurePool(ctx, spec.user, deleteBudget(ctx, 'service', S.warmupSec + S.durationSec, spec.deleteShare));
    spec.after(ctx, await ctx.loadgen.run(job(ctx, target, spec.user, spec.workload(ctx), S.warmupSec)));
    await waitForQuiet(ctx);
    proc.child.kill('SIGUSR2'); // start profiling
    await sleep(200);
    spec.after(ctx, await ctx.loadgen.run(job(ctx, target, spec.user, spec.workload(ctx), S.durationSec)));
    proc.child.kill('SIGUSR2'); // write the profile and exit
    await Promise.race([proc.exited, sleep(15_000)]);
  } finally {
    await stopProcess(proc);
    ctx.extraPids.delete(proc.pid);
  }
  return existsSync(file) ? summarizeProfile(file) : null;
}

/** The service profiled under the list and the create load; a profile that fails leaves a note. */
export async function profileScenarios(
  ctx: Context,
  serviceEnv: NodeJS.ProcessEnv,
  cpus: string | undefined,
  notes: string[],
): Promise<BenchResults['profiles']> {
  const profiles: BenchResults['profiles'] = [];
  for (const name of ['list', 'create']) {
    log(`profiling the service under the ${name} load`);
    const summary = await profileService(ctx, serviceEnv, scenarioNamed(name), cpus).catch((error: unknown) => {
      notes.push(`The ${name} profile failed: ${String((error as Error).message).split('\n')[0]}`);
      return null;
    });
    if (summary) profiles.push({ scenario: name, summary });
  }
  return profiles;
}
