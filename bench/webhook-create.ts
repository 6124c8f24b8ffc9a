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
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshBenchDatabase, issueToken, log, median, range, startProdArgv } from './lib/standalone';
import { withScheme } from './lib/db';
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
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_webhooks',
  rounds: Number(env.BENCH_WEBHOOK_ROUNDS || 7),
  durationSec: parseFloat(env.BENCH_DURATION || '10'),
  warmupSec: parseFloat(env.BENCH_WARMUP || '3'),
  connections: Number(env.BENCH_CONNECTIONS || 32),
  port: Number(env.BENCH_PORT_BASE || 3311),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
  drainSec: parseFloat(env.BENCH_DRAIN_SECONDS || '60'),
};
const ROOT = process.cwd();
const OUT = join(ROOT, 'bench', '.out');
const OWNERS = { with: 'bench-hooked', without: 'bench-plain' } as const;
type Kind = keyof typeof OWNERS;

interface Measured {
  rps: number;
  cpuUsPerRequest: number;
}

/** Creates with ids counting up from `next`, one owner's token. */
function createLoad(token: string, seconds: number, ids: { next: bigint }): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${S.port}/plants`,
    connections: S.connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: `{"id":${ids.next++},"name":"Bench plant"}` }),
      },
    ],
  });
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  await initClockTicks();
  if (!S.skipBuild) {
    log('building the service (npm run build)');
    await run('npm', ['run', 'build'], { cwd: ROOT });
  }
  const { db, conn, version } = await freshBenchDatabase(S.databaseUrl);
  const pin = await canPin();
  if (pin) await setAffinity(process.pid, '1');

  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const serviceEnv: NodeJS.ProcessEnv = {
    PATH: env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: withScheme(db, /mariadb/i.test(version) ? 'mariadb' : 'mysql'),
    HOST: '127.0.0.1',
    PORT: String(S.port),
    RATE_LIMIT_PER_MINUTE: '1000000000',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    // The receiver is on this machine, over http.
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
  const command = startProdArgv(ROOT);
  const tokens = {} as Record<Kind, string>;
  for (const kind of ['with', 'without'] as const) tokens[kind] = await issueToken(ROOT, serviceEnv, OWNERS[kind]);

  const service = startProcess('service', command, {
    env: serviceEnv,
    cwd: ROOT,
    cpus: pin ? '0' : undefined,
    logPath: join(OUT, 'webhook-create-service.log'),
  });
  const rounds: { with: Measured; without: Measured; rps: number; cpu: number }[] = [];
  let backlog: number;
  let drain: { delivered: number; seconds: number; left: number };
  try {
    await waitForHttp(`http://127.0.0.1:${S.port}/health/live`, service);
    const subscribed = await fetch(`http://127.0.0.1:${S.port}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.with}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiverUrl, events: ['plant.created', 'plant.deleted'] }),
    });
    if (subscribed.status !== 201) throw new Error(`POST /webhooks answered ${subscribed.status}`);
    const ids: Record<Kind, { next: bigint }> = { with: { next: 1n }, without: { next: 1n } };

    const measure = async (kind: Kind): Promise<Measured> => {
      const cpu0 = cpuSeconds(service.pid);
      const result = await createLoad(tokens[kind], S.durationSec, ids[kind]);
      const cpu = cpuSeconds(service.pid) - cpu0;
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      return { rps: result.requests.average, cpuUsPerRequest: (cpu * 1e6) / result.requests.total };
    };

    log(`warm-up: ${S.warmupSec} s per owner`);
    for (const kind of ['without', 'with'] as const) {
      const warm = await createLoad(tokens[kind], S.warmupSec, ids[kind]);
      if (warm.non2xx > 0) throw new Error(`${kind}: ${warm.non2xx} non-2xx answers in the warm-up`);
    }
    for (let round = 0; round < S.rounds; round++) {
      const order = round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
      const measured: Partial<Record<Kind, Measured>> = {};
      for (const kind of order) measured[kind] = await measure(kind);
      const { with: w, without: o } = measured as Record<Kind, Measured>;
      rounds.push({ with: w, without: o, rps: w.rps / o.rps, cpu: o.cpuUsPerRequest / w.cpuUsPerRequest });
      log(
        `round ${round + 1}/${S.rounds}: without ${o.rps.toFixed(0)} req/s (${o.cpuUsPerRequest.toFixed(1)} µs CPU/req), with ${w.rps.toFixed(0)} req/s (${w.cpuUsPerRequest.toFixed(1)} µs/req): with ÷ without ${rounds.at(-1)!.rps.toFixed(3)}`,
      );
    }
    const pending = async () => {
      const [[row]] = (await conn.query(
        `SELECT COUNT(*) AS n FROM \`${db.database}\`.webhook_deliveries WHERE state = 'pending'`,
      )) as unknown as [[{ n: number }]];
      return Number(row.n);
    };
    backlog = await pending();
    const drainStart = Date.now();
    const receivedAtStart = received;
    let left = backlog;
    while (left > 0 && Date.now() - drainStart < S.drainSec * 1000) {
      await sleep(1000);
      left = await pending();
    }
    drain = { delivered: received - receivedAtStart, seconds: (Date.now() - drainStart) / 1000, left };
    log(
      `backlog when the load stopped: ${backlog}; then ${drain.delivered} delivered in ${drain.seconds.toFixed(1)} s, ${left} left`,
    );
  } finally {
    await stopProcess(service);
    receiver.close();
  }
  const created = createsMeasured(rounds);
  await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``);
  await conn.end();

  const rps = rounds.map((r) => r.rps);
  const cpu = rounds.map((r) => r.cpu);
  const report = [
    '| round | without req/s | without CPU µs/req | with req/s | with CPU µs/req | with ÷ without, req/s | with ÷ without, requests per CPU-second |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.without.rps.toFixed(0)} | ${r.without.cpuUsPerRequest.toFixed(1)} | ${r.with.rps.toFixed(0)} | ${r.with.cpuUsPerRequest.toFixed(1)} | ${r.rps.toFixed(3)} | ${r.cpu.toFixed(3)} |`,
    ),
    '',
    `Create throughput with one subscription ÷ without, median of ${rounds.length} rounds: **${median(rps).toFixed(3)}** ${range(rps)}; ` +
      `in requests per CPU-second: ${median(cpu).toFixed(3)} ${range(cpu)}.`,
    '',
    `Deliveries: about ${created} creates with a subscription were measured; ${backlog} deliveries were still pending when the load stopped. ` +
      `The idle instance then delivered ${drain.delivered} in ${drain.seconds.toFixed(1)} s (${(drain.delivered / drain.seconds).toFixed(0)} per second, ` +
      `WEBHOOK_CONCURRENCY 16), ${drain.left} left.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per owner after ${S.warmupSec} s of warm-up each, ${S.connections} connections, ` +
      `\`${command.slice(1).join(' ')}\`, LOG_LEVEL=warn, Node.js ${process.version}, ${version}, receiver in the load process answering 204, ` +
      `${pin ? 'the service on CPU 0, load, receiver and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
  writeFileSync(join(OUT, 'webhook-create.md'), `${report}\n`);
  process.stdout.write(`${report}\n`);
}

/** Creates measured for the owner with a subscription, warm-up excluded. */
function createsMeasured(rounds: { with: Measured }[]): number {
  return Math.round(rounds.reduce((sum, r) => sum + r.with.rps * S.durationSec, 0));
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
