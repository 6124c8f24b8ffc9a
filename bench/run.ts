/**
 * `npm run bench`: the service against hand-written peers of the same contract, on MySQL or
 * MariaDB. See bench/README.md for what it measures and how to read bench/RESULTS.md; its parts
 * are in bench/run/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Counters, measureCounterBaseline, ownerName, seedRange } from './lib/db';
import { OUT, ROOT, log } from './lib/harness';
import { initClockTicks } from './lib/sys';
import { TARGETS } from './lib/types';
import { checkParity, traceRequests } from './run/checks';
import { runClusterScenario } from './run/cluster-scenario';
import type { Context } from './run/context';
import { LoadGenerator, ensurePool } from './run/load';
import { profileScenarios } from './run/profiling';
import { Measurements, RunFacts, collectResults, writeResults } from './run/results';
import { explainLists, runScale } from './run/scale';
import { runScenario, scenarioNamed } from './run/scenarios';
import { createTokens, serviceEnvironment, startService, startTargets } from './run/servers';
import { PLANTS_PER_USER, POOL_BASE, S } from './run/settings';
import { Cleanups, buildService, openDatabase, pinProcesses, sourceState } from './run/setup';

/** The owner the scale scenario lists: one in the middle of its users. */
const scaleUsers = Math.max(1, Math.round(S.scaleRows / PLANTS_PER_USER));
const scaleOwner = ownerName('scale-', Math.ceil(scaleUsers / 2), scaleUsers);

/** The service, its peers and the load generator, running, with the tokens and plants the scenarios use. */
async function startAll(facts: RunFacts, serviceEnv: NodeJS.ProcessEnv, cleanups: Cleanups): Promise<Context> {
  const { server, pinning } = facts;
  const users = ['bench-list', 'bench-create', 'bench-delete', 'bench-mix', 'bench-trace', scaleOwner];
  const tokens = await createTokens(serviceEnv, users);
  const targets = await startTargets(facts.service, server, pinning.cpusService, cleanups);
  const loadgen = LoadGenerator.start(pinning.cpusOther);
  cleanups.add(() => loadgen.stop());
  const ctx: Context = {
    conn: server.conn,
    targets,
    loadgen,
    tokens,
    dbPid: pinning.dbPid,
    baseline: { selfCost: {} as Counters, idleNoisePerSec: {} as Counters },
    createNext: new Map(),
    pools: new Map(),
    rpsSeen: new Map(),
    busyStarts: 0,
    quietWaitSec: 0,
    extraPids: new Set(),
  };
  log('seeding: bench-list and bench-mix with 1,000 plants each');
  await seedRange(server.conn, 'bench-list', 1n, PLANTS_PER_USER);
  await seedRange(server.conn, 'bench-mix', 1n, PLANTS_PER_USER);
  await ensurePool(ctx, 'bench-mix', 0);
  ctx.pools.set('bench-delete', { next: POOL_BASE, end: POOL_BASE });
  return ctx;
}

/** Minutes of load the settings ask for, to announce. */
function plannedMinutes(): number {
  const targets = TARGETS.length;
  const planned =
    S.scenarios.filter((name) => name !== 'cluster').length *
      (targets * S.warmupSec + S.rounds * targets * S.durationSec) +
    (S.scenarios.includes('cluster') ? 30 + 4 * S.warmupSec + S.rounds * 4 * S.durationSec + 20 : 0) +
    (S.scale ? 2 * (targets * S.warmupSec + S.scaleRounds * targets * (S.durationSec + S.singleSec)) : 0) +
    (S.profile ? 2 * (S.warmupSec + S.durationSec + 5) : 0);
  return Math.ceil(planned / 60);
}

/** The SQL trace and the parity check, then every scenario asked for, the profiles and the scale steps. */
async function measureAll(
  ctx: Context,
  facts: RunFacts,
  serviceEnv: NodeJS.ProcessEnv,
  serviceIdleRssMb: number | null,
): Promise<Measurements> {
  const trace = S.trace ? await traceRequests(ctx) : null;
  if (S.trace && trace === null)
    facts.notes.push(
      'The general query log could not be switched on (needs SUPER, or it was already on): no SQL trace.',
    );
  const parity = await checkParity(ctx);
  const mismatches = parity.filter((p) => !p.same);
  if (mismatches.length > 0)
    log(`parity: ${mismatches.length} answers of the peers differ from the service's (see RESULTS.md)`);
  ctx.baseline = await measureCounterBaseline(ctx.conn, 2000);
  log(
    `status counters: ${ctx.baseline.selfCost.Questions} question per read; idle noise ${ctx.baseline.idleNoisePerSec.Questions.toFixed(2)} questions/s`,
  );
  log(`about ${plannedMinutes()} min of load to go`);
  const scenarios = [];
  for (const name of S.scenarios.filter((n) => n !== 'cluster'))
    scenarios.push(await runScenario(ctx, scenarioNamed(name)));
  const cluster = S.scenarios.includes('cluster') ? await runClusterScenario(ctx, serviceEnv) : null;
  const profiles = S.profile ? await profileScenarios(ctx, serviceEnv, facts.pinning.cpusService, facts.notes) : [];
  const scale = S.scale ? await runScale(ctx, scaleOwner, scaleUsers) : [];
  const explain = S.scale ? await explainLists(ctx, scaleOwner) : [];
  return { parity, trace, scenarios, scale, cluster, explain, profiles, serviceIdleRssMb };
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'bench', 'run.ts'))) throw new Error('run from the repository root: npm run bench');
  mkdirSync(OUT, { recursive: true });
  const startedAt = new Date().toISOString();
  const notes: string[] = [];
  const cleanups = new Cleanups();
  try {
    await initClockTicks();
    await buildService();
    const server = await openDatabase(cleanups);
    const pinning = await pinProcesses(server, notes, cleanups);
    const source = await sourceState(notes);
    const serviceEnv = serviceEnvironment(server);
    const { service, idleRssMb } = await startService(serviceEnv, pinning.cpusService, cleanups);
    const facts: RunFacts = { startedAt, notes, server, pinning, source, service };
    const ctx = await startAll(facts, serviceEnv, cleanups);
    const measured = await measureAll(ctx, facts, serviceEnv, idleRssMb);
    writeResults(await collectResults(ctx, facts, measured));
  } finally {
    await cleanups.runAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  },
);
