/**
 * The cluster scenario (BENCH_SCENARIOS=cluster): two instances on two Galera nodes against one
 * instance on the single server, side by side; then the cost of causal reads and the fault drill.
 */
import { join } from 'node:path';
import { recreateDatabase, seedRange } from '../lib/db';
import { LocalCluster, probeCausalReads, startCluster } from '../lib/cluster';
import { runFaultDrill } from '../lib/faults';
import { runSchemaChangeDrill } from '../lib/schema-change';
import { LIST_PATH, OUT, ROOT, issueToken, log } from '../lib/harness';
import { runSideBySide } from '../lib/side-by-side';
import { Spawned, cpuSeconds, startProcess, stopProcess, waitForHttp } from '../lib/sys';
import { ClusterResult, ClusterRound } from '../lib/types';
import type { LoadJob, LoadResult, Workload } from '../loadgen';
import type { Context } from './context';
import { job } from './load';
import { othersMeter, waitForQuiet } from './quiet';
import { CREATE_BASE, PLANTS_PER_USER, S, nodeCommand, START_PROD } from './settings';

const CLUSTER_DATABASE = 'plantstore_bench_cluster';
type Kind = ClusterRound['workload'];
type Setup = ClusterRound['setup'];

/** What the cluster's rounds load: its instances, their tokens, and the next id to create there. */
interface ClusterSide {
  cluster: LocalCluster;
  instances: Spawned[];
  urls: string[];
  tokens: Record<Kind, string>;
  nextId: bigint;
}

/** An instance of the service on the cluster (at the DATABASE_URL of `env`); it counts as the benchmark's. */
async function startInstance(
  ctx: Context,
  side: ClusterSide,
  instance: { name: string; logName: string; env: NodeJS.ProcessEnv; port: number },
): Promise<string> {
  const proc = startProcess(instance.name, nodeCommand(START_PROD.script), {
    env: { ...instance.env, PORT: String(instance.port) },
    cwd: ROOT,
    logPath: join(OUT, `service-${instance.logName}.log`),
  });
  side.instances.push(proc);
  ctx.extraPids.add(proc.pid);
  await waitForHttp(`http://127.0.0.1:${instance.port}/plants`, proc);
  return `http://127.0.0.1:${instance.port}`;
}

/** The cluster's database, an instance on node 1 and one on node 2, the tokens and the list's plants. */
async function prepareCluster(ctx: Context, cluster: LocalCluster, serviceEnv: NodeJS.ProcessEnv, side: ClusterSide) {
  const admin = await cluster.connect(1);
  try {
    await recreateDatabase(admin, CLUSTER_DATABASE);
  } finally {
    await admin.end();
  }
  for (const node of [1, 2]) {
    const env = { ...serviceEnv, DATABASE_URL: cluster.nodeUrl(node, CLUSTER_DATABASE) };
    const port = S.portBase + 20 + node;
    side.urls.push(
      await startInstance(ctx, side, { name: `service on Galera node ${node}`, logName: `galera${node}`, env, port }),
    );
  }
  const nodeEnv = { ...serviceEnv, DATABASE_URL: cluster.nodeUrl(1, CLUSTER_DATABASE) };
  side.tokens.list = await issueToken(ROOT, nodeEnv, 'bench-list');
  side.tokens.create = await issueToken(ROOT, nodeEnv, 'bench-create');
  const seed = await cluster.connect(1, CLUSTER_DATABASE);
  try {
    await seedRange(seed, 'bench-list', 1n, PLANTS_PER_USER);
  } finally {
    await seed.end();
  }
}

/** The job of one run: the single server's instance, or the two instances with the load split. */
function clusterJob(ctx: Context, side: ClusterSide, kind: Kind, setup: Setup, sec: number): LoadJob {
  const nextId = setup === 'single' ? (ctx.createNext.get('bench-create') ?? CREATE_BASE) : side.nextId;
  const workload: Workload =
    kind === 'list' ? { kind: 'list', path: LIST_PATH } : { kind: 'create', nextId: String(nextId) };
  if (setup === 'single') return job(ctx, ctx.targets[0], `bench-${kind}`, workload, sec);
  const { urls, tokens } = side;
  return { url: urls[0], urls, token: tokens[kind], workload, connections: S.connections, durationSec: sec };
}

function takeIds(ctx: Context, side: ClusterSide, kind: Kind, setup: Setup, load: LoadResult): void {
  if (kind !== 'create') return;
  if (setup === 'single') ctx.createNext.set('bench-create', BigInt(load.nextCreateId!));
  else side.nextId = BigInt(load.nextCreateId!);
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) || 0), 0);

/** One measured run of a setup, with the CPU of its instances and database servers. */
async function measureSetup(ctx: Context, side: ClusterSide, kind: Kind, setup: Setup, round: number) {
  await waitForQuiet(ctx);
  const pids = setup === 'single' ? [ctx.targets[0].proc.pid] : side.instances.map((p) => p.pid);
  const dbPids = setup === 'single' ? (ctx.dbPid ? [ctx.dbPid] : []) : side.cluster.pids();
  const others = othersMeter(ctx);
  const t0 = Date.now();
  const cpu0 = { instances: cpuOf(pids), db: cpuOf(dbPids) };
  const load = await ctx.loadgen.run(clusterJob(ctx, side, kind, setup, S.durationSec));
  const wall = (Date.now() - t0) / 1000;
  takeIds(ctx, side, kind, setup, load);
  const r: ClusterRound = {
    round,
    workload: kind,
    setup,
    load,
    cpu: {
      instances: (cpuOf(pids) - cpu0.instances) / wall,
      db: dbPids.length > 0 ? (cpuOf(dbPids) - cpu0.db) / wall : null,
      others: others(),
    },
  };
  log(`cluster ${kind} ${round}/${S.rounds} ${describeClusterRound(r)}`);
  return r;
}

function describeClusterRound({ setup, load, cpu }: ClusterRound): string {
  const statuses = Object.entries(load.status)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
  // A run without responses has no percentiles (NaN, null once through IPC).
  const msText = (x: number | null) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(2) : 'n/a');
  return (
    `${setup === 'single' ? '1 instance, 1 server ' : '2 instances, 2 nodes'} ${Math.round(load.rps).toString().padStart(6)} req/s  p50 ${msText(load.latencyMs.p50)} ms  p99 ${msText(load.latencyMs.p99)} ms  ` +
    `instances CPU ${(cpu.instances * 100).toFixed(0)}%  db CPU ${cpu.db === null ? 'n/a' : `${(cpu.db * 100).toFixed(0)}%`}  others ${(cpu.others * 100).toFixed(0)}%  ` +
    `[${statuses}${load.errors ? ` errors×${load.errors}` : ''}${load.timeouts ? ` timeouts×${load.timeouts}` : ''}]`
  );
}

/** The single server's instance and the cluster's two, side by side under the list and the create load. */
async function compareSetups(ctx: Context, side: ClusterSide): Promise<ClusterRound[]> {
  log(`cluster: warm-up ${S.warmupSec}s per setup and workload`);
  const rounds: ClusterRound[] = [];
  await runSideBySide<Kind, void>({
    sides: (['single', 'cluster'] as const).map((setup) => ({
      name: setup,
      warm: async (kind) =>
        takeIds(ctx, side, kind, setup, await ctx.loadgen.run(clusterJob(ctx, side, kind, setup, S.warmupSec))),
      measure: async (kind, round) => void rounds.push(await measureSetup(ctx, side, kind, setup, round + 1)),
    })),
    workloads: ['list', 'create'],
    rounds: S.rounds,
  });
  return rounds;
}

async function measureCausalReads(ctx: Context, cluster: LocalCluster): Promise<ClusterResult['causal']> {
  log(`cluster: causal reads, ${S.causalStatements} list statements per setting, idle and under writes, twice`);
  const causal: ClusterResult['causal'] = [];
  for (let pass = 1; pass <= 2; pass++) {
    for (const writes of [false, true]) {
      await waitForQuiet(ctx);
      causal.push(...(await probeCausalReads(cluster, CLUSTER_DATABASE, 'bench-list', S.causalStatements, writes)));
    }
  }
  return causal;
}

/** The instance the fault and schema-change drills write through: one behind HAProxy. */
async function startProxied(ctx: Context, side: ClusterSide, serviceEnv: NodeJS.ProcessEnv): Promise<string> {
  const env = { ...serviceEnv, DATABASE_URL: side.cluster.haproxyUrl(CLUSTER_DATABASE) };
  const port = S.portBase + 23;
  return startInstance(ctx, side, { name: 'service through HAProxy', logName: 'haproxy', env, port });
}

async function faultDrill(side: ClusterSide, url: string) {
  log(`cluster: faults of the writer node, ${S.faultRounds} round(s), one instance writing through HAProxy`);
  const faults = await runFaultDrill(side.cluster, url, side.tokens.create, {
    rounds: S.faultRounds,
    writers: 4,
    firstId: side.nextId,
    log,
  });
  side.nextId += 100_000_000n;
  return faults;
}

async function schemaChangeDrill(side: ClusterSide, url: string) {
  log(
    `cluster: schema changes of plants at ${S.schemaRows.join(', ')} rows (${S.schemaWays.join(', ')}), writing through HAProxy`,
  );
  const rounds = await runSchemaChangeDrill(side.cluster, CLUSTER_DATABASE, url, side.tokens.create, {
    sizes: S.schemaRows,
    ways: S.schemaWays,
    firstId: side.nextId,
    log,
  });
  side.nextId += 100_000_000n;
  return rounds;
}

export async function runClusterScenario(ctx: Context, serviceEnv: NodeJS.ProcessEnv): Promise<ClusterResult> {
  log(`cluster: starting three Galera nodes (scripts/galera-cluster.sh, ports from ${S.clusterPortBase})`);
  const cluster = await startCluster(ROOT, S.clusterPortBase);
  const side: ClusterSide = { cluster, instances: [], urls: [], tokens: { list: '', create: '' }, nextId: CREATE_BASE };
  try {
    log(`cluster: up in ${cluster.startSec.toFixed(0)} s`);
    for (const pid of cluster.pids()) ctx.extraPids.add(pid);
    await prepareCluster(ctx, cluster, serviceEnv, side);
    const rounds = await compareSetups(ctx, side);
    const causal = await measureCausalReads(ctx, cluster);
    const proxied = S.faultRounds > 0 || S.schemaRows.length > 0 ? await startProxied(ctx, side, serviceEnv) : '';
    const faults = S.faultRounds > 0 ? await faultDrill(side, proxied) : [];
    const schemaChanges = S.schemaRows.length > 0 ? await schemaChangeDrill(side, proxied) : [];
    return {
      description:
        'Two instances of the service, one attached to Galera node 1 and one to node 2 directly (no HAProxy), the load split evenly between them, against one instance on the single server of BENCH_DATABASE_URL; same connections in all, same requests as the list and create scenarios. All three nodes run on this machine.',
      startSec: cluster.startSec,
      connections: S.connections,
      rounds,
      causal,
      faults,
      schemaChanges,
    };
  } finally {
    for (const proc of side.instances) {
      await stopProcess(proc);
      ctx.extraPids.delete(proc.pid);
    }
    for (const pid of cluster.pids()) ctx.extraPids.delete(pid);
    await cluster.stop();
  }
}
