/**
 * What a webhook subscription costs a create: the create throughput of one instance of the service
 * for an owner with one subscription (plant.created and plant.deleted) against an owner with none,
 * under the same load, on the same instance and database.
 *
 * The subscription's endpoint is a local receiver that answers 204, so the instance also delivers
 * every event it records while it is measured: the figure is the whole cost of a subscription (the
 * trigger's row, the claim, the signed POST and its bookkeeping), not the trigger alone. Each round
 * measures both owners one after the other, in alternating order, each creating new plants; the
 * ratio with ÷ without is taken per round, in requests per second and per CPU-second of the service.
 * Deliveries compete with the load for the instance's one event loop; what is still pending when the
 * load stops is reported, and so is the rate at which the idle instance then delivers it (at most
 * BENCH_DRAIN_SECONDS, 60 s, are watched).
 *
 *   npm run bench:webhooks     # BENCH_WEBHOOK_ROUNDS (7), BENCH_DURATION (10s), BENCH_WARMUP (3s)
 */
import { join } from 'node:path';
import { seconds } from './lib/env';
import {
  Measured,
  OUT,
  ROOT,
  Standalone,
  compareOnOneInstance,
  createLoad,
  finishStandalone,
  issueToken,
  log,
  pairRounds,
  prepareStandalone,
  runMain,
  serviceEnvironment,
  standaloneSettings,
  startProdArgv,
} from './lib/harness';
import { Round, ratioSummary } from './lib/side-by-side';
import { Spawned, sleep, startProcess, stopProcess, waitForHttp } from './lib/sys';
import { startReceiver, subscribe, webhookEnvironment } from './lib/webhooks';

const S = {
  ...standaloneSettings({
    roundsVariable: 'BENCH_WEBHOOK_ROUNDS',
    rounds: 7,
    databaseUrl: 'mysql://root@127.0.0.1:3306/plantstore_bench_webhooks',
    portBase: 3311,
  }),
  drainSec: seconds(process.env.BENCH_DRAIN_SECONDS, 60),
};
/** The reference first: the ratios are with ÷ without. */
const KINDS = ['without', 'with'] as const;
type Kind = (typeof KINDS)[number];
const OWNERS: Record<Kind, string> = { with: 'bench-hooked', without: 'bench-plain' };
/** The plants this benchmark creates: a name, no tag. */
const PLANT = '"name":"Bench plant"';

function compareOwners(service: Spawned, tokens: Record<Kind, string>) {
  const ids: Record<Kind, { next: bigint }> = { with: { next: 1n }, without: { next: 1n } };
  const load = (kind: Kind, sec: number) => createLoad(S.portBase, tokens[kind], sec, S.connections, ids[kind], PLANT);
  return compareOnOneInstance({
    kinds: KINDS,
    workload: 'create',
    pid: service.pid,
    rounds: S.rounds,
    warmupSec: S.warmupSec,
    durationSec: S.durationSec,
    load,
  });
}

interface Drain {
  /** Deliveries still pending when the load stopped. */
  backlog: number;
  delivered: number;
  seconds: number;
  left: number;
}

/** Watches the idle instance deliver what the load left pending, for at most BENCH_DRAIN_SECONDS. */
async function watchDrain(bench: Standalone, received: () => number): Promise<Drain> {
  const pending = async () => {
    const [[row]] = (await bench.conn.query(
      `SELECT COUNT(*) AS n FROM \`${bench.db.database}\`.webhook_deliveries WHERE state = 'pending'`,
    )) as unknown as [[{ n: number }]];
    return Number(row.n);
  };
  const backlog = await pending();
  const drainStart = Date.now();
  const receivedAtStart = received();
  let left = backlog;
  while (left > 0 && Date.now() - drainStart < S.drainSec * 1000) {
    await sleep(1000);
    left = await pending();
  }
  const drain = { backlog, delivered: received() - receivedAtStart, seconds: (Date.now() - drainStart) / 1000, left };
  log(
    `backlog when the load stopped: ${backlog}; then ${drain.delivered} delivered in ${drain.seconds.toFixed(1)} s, ${left} left`,
  );
  return drain;
}

/** Creates measured for the owner with a subscription, warm-up excluded. */
function createsMeasured(runs: Measured[][]): number {
  return Math.round(runs.reduce((sum, r) => sum + r[KINDS.indexOf('with')].rps * S.durationSec, 0));
}

function report(rounds: Round<'create', Measured>[], drain: Drain, version: string, pin: boolean): string {
  const runs = rounds.map((r) => r.create);
  const { table, rps, cpu } = pairRounds(runs, KINDS);
  return [
    ...table,
    '',
    `Create throughput with one subscription ÷ without, median of ${rounds.length} rounds: ${ratioSummary(rps, true)}; ` +
      `in requests per CPU-second: ${ratioSummary(cpu)}.`,
    '',
    `Deliveries: about ${createsMeasured(runs)} creates with a subscription were measured; ${drain.backlog} deliveries were still pending when the load stopped. ` +
      `The idle instance then delivered ${drain.delivered} in ${drain.seconds.toFixed(1)} s (${(drain.delivered / drain.seconds).toFixed(0)} per second, ` +
      `WEBHOOK_CONCURRENCY 16), ${drain.left} left.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per owner after ${S.warmupSec} s of warm-up each, ${S.connections} connections, ` +
      `\`${startProdArgv(ROOT).slice(1).join(' ')}\`, LOG_LEVEL=warn, Node.js ${process.version}, ${version}, receiver in the load process answering 204, ` +
      `${pin ? 'the service on CPU 0, load, receiver and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const receiver = await startReceiver();
  const serviceEnv: NodeJS.ProcessEnv = {
    ...serviceEnvironment(bench.db, bench.version),
    PORT: String(S.portBase),
    LOG_LEVEL: 'warn',
    ...webhookEnvironment(),
  };
  const tokens = {} as Record<Kind, string>;
  for (const kind of ['with', 'without'] as const) tokens[kind] = await issueToken(ROOT, serviceEnv, OWNERS[kind]);
  const service = startProcess('service', startProdArgv(ROOT), {
    env: serviceEnv,
    cwd: ROOT,
    cpus: bench.serviceCpus,
    logPath: join(OUT, 'webhook-create-service.log'),
  });
  let rounds: Round<'create', Measured>[];
  let drain: Drain;
  try {
    await waitForHttp(`http://127.0.0.1:${S.portBase}/health/live`, service);
    await subscribe(S.portBase, tokens.with, receiver.url);
    rounds = await compareOwners(service, tokens);
    drain = await watchDrain(bench, receiver.received);
  } finally {
    await stopProcess(service);
    receiver.server.close();
  }
  await finishStandalone(bench, join(OUT, 'webhook-create.md'), report(rounds, drain, bench.version, bench.pin));
}

runMain(main);
