/**
 * What a JWT access token costs against a `pst_` token: the list throughput of one instance of the
 * service, configured with an identity provider (OIDC_ISSUER), under the same load with a `pst_`
 * token and with a JWT of the provider, for the same owner and the same 1,000 plants.
 *
 * The provider is panva's oidc-provider (the one the e2e tests use, test/utils/openid-provider-process.mjs)
 * on 127.0.0.1, issuing a client-credentials JWT that lives longer than the run. Each round measures
 * both tokens one after the other, in alternating order, on the same instance; the ratio JWT ÷ pst
 * is taken per round, in requests per second and in requests per CPU-second of the service.
 *
 *   npm run bench:jwt          # BENCH_JWT_ROUNDS (7), BENCH_DURATION (10s), BENCH_WARMUP (3s)
 */
import { exportJWK, generateKeyPair } from 'jose';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshBenchDatabase, issueToken, listLoad, log, median, range, startProdArgv } from './lib/standalone';
import { seedRange, withScheme } from './lib/db';
import {
  canPin,
  cpuSeconds,
  initClockTicks,
  run,
  setAffinity,
  startProcess,
  stopProcess,
  waitForHttp,
} from './lib/sys';

const env = process.env;
const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench_jwt',
  rounds: Number(env.BENCH_JWT_ROUNDS || 7),
  durationSec: parseFloat(env.BENCH_DURATION || '10'),
  warmupSec: parseFloat(env.BENCH_WARMUP || '3'),
  connections: Number(env.BENCH_CONNECTIONS || 32),
  port: Number(env.BENCH_PORT_BASE || 3301),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
};
const ROOT = process.cwd();
const OUT = join(ROOT, 'bench', '.out');
/** The owner of both tokens: the JWT's `sub` is its client id. */
const USER = 'bench-jwt';
const AUDIENCE = 'https://plants.bench';
const CLIENT_SECRET = 'bench-jwt-client-secret-0123456789abcdef';
const TARGET = 0.95;

async function providerToken(issuer: string): Promise<string> {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${USER}:${CLIENT_SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'plants:read plants:write' }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`the provider issued no token: ${res.status}`);
  return body.access_token;
}

interface Measured {
  rps: number;
  cpuUsPerRequest: number;
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

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
  const providerPort = S.port + 1;
  const issuer = `http://127.0.0.1:${providerPort}`;
  const provider = startProcess(
    'openid provider',
    [process.execPath, join(ROOT, 'test/utils/openid-provider-process.mjs')],
    {
      env: {
        PATH: env.PATH,
        NODE_ENV: 'test',
        OIDC_TEST_PROVIDER: JSON.stringify({
          port: providerPort,
          jwks: { keys: [jwk] },
          audience: AUDIENCE,
          clients: [{ client_id: USER, client_secret: CLIENT_SECRET, scope: 'plants:read plants:write' }],
          accessTokenTtlS: 3600,
        }),
      },
      cwd: ROOT,
      cpus: pin ? '1' : undefined,
      logPath: join(OUT, 'jwt-list-provider.log'),
    },
  );

  const serviceEnv: NodeJS.ProcessEnv = {
    PATH: env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: withScheme(db, /mariadb/i.test(version) ? 'mariadb' : 'mysql'),
    HOST: '127.0.0.1',
    PORT: String(S.port),
    RATE_LIMIT_PER_MINUTE: '1000000000',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    OIDC_ISSUER: issuer,
    OIDC_AUDIENCE: AUDIENCE,
  };
  const command = startProdArgv(ROOT);
  const pst = await issueToken(ROOT, serviceEnv, USER);
  await seedRange(conn, USER, 1n, 1000);

  const service = startProcess('service', command, {
    env: serviceEnv,
    cwd: ROOT,
    cpus: pin ? '0' : undefined,
    logPath: join(OUT, 'jwt-list-service.log'),
  });
  const rounds: { pst: Measured; jwt: Measured; rps: number; cpu: number }[] = [];
  try {
    await waitForHttp(`${issuer}/.well-known/openid-configuration`, provider);
    await waitForHttp(`http://127.0.0.1:${S.port}/health/live`, service);
    const jwt = await providerToken(issuer);
    const tokens = { pst, jwt };

    const measure = async (kind: 'pst' | 'jwt'): Promise<Measured> => {
      const cpu0 = cpuSeconds(service.pid);
      const result = await listLoad(S.port, tokens[kind], S.durationSec, S.connections);
      const cpu = cpuSeconds(service.pid) - cpu0;
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      }
      return { rps: result.requests.average, cpuUsPerRequest: (cpu * 1e6) / result.requests.total };
    };

    log(`warm-up: ${S.warmupSec} s per token`);
    for (const kind of ['pst', 'jwt'] as const) {
      const warm = await listLoad(S.port, tokens[kind], S.warmupSec, S.connections);
      if (warm.non2xx > 0) throw new Error(`${kind}: ${warm.non2xx} non-2xx answers in the warm-up`);
    }
    for (let round = 0; round < S.rounds; round++) {
      const order = round % 2 === 0 ? (['pst', 'jwt'] as const) : (['jwt', 'pst'] as const);
      const measured: Partial<Record<'pst' | 'jwt', Measured>> = {};
      for (const kind of order) measured[kind] = await measure(kind);
      const { pst: p, jwt: j } = measured as Record<'pst' | 'jwt', Measured>;
      rounds.push({ pst: p, jwt: j, rps: j.rps / p.rps, cpu: p.cpuUsPerRequest / j.cpuUsPerRequest });
      log(
        `round ${round + 1}/${S.rounds}: pst ${p.rps.toFixed(0)} req/s (${p.cpuUsPerRequest.toFixed(1)} µs CPU/req), jwt ${j.rps.toFixed(0)} req/s (${j.cpuUsPerRequest.toFixed(1)} µs/req): jwt ÷ pst ${rounds.at(-1)!.rps.toFixed(3)}`,
      );
    }
  } finally {
    await stopProcess(service);
    await stopProcess(provider);
  }
  await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``);
  await conn.end();

  const rps = rounds.map((r) => r.rps);
  const cpu = rounds.map((r) => r.cpu);
  const report = [
    '| round | pst req/s | pst CPU µs/req | jwt req/s | jwt CPU µs/req | jwt ÷ pst, req/s | jwt ÷ pst, requests per CPU-second |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.pst.rps.toFixed(0)} | ${r.pst.cpuUsPerRequest.toFixed(1)} | ${r.jwt.rps.toFixed(0)} | ${r.jwt.cpuUsPerRequest.toFixed(1)} | ${r.rps.toFixed(3)} | ${r.cpu.toFixed(3)} |`,
    ),
    '',
    `JWT ÷ pst list throughput, median of ${rounds.length} rounds: **${median(rps).toFixed(3)}** ${range(rps)} ` +
      `(target: at least ${TARGET}, ${median(rps) >= TARGET ? 'met' : 'NOT met'}); in requests per CPU-second: ${median(cpu).toFixed(3)} ${range(cpu)}.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per token after ${S.warmupSec} s of warm-up each, ${S.connections} connections, ` +
      `\`${command.slice(1).join(' ')}\`, LOG_LEVEL=warn, Node.js ${process.version}, ${version}, RS256 JWT from oidc-provider, ` +
      `${pin ? 'the service on CPU 0, load, provider and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
  writeFileSync(join(OUT, 'jwt-list.md'), `${report}\n`);
  process.stdout.write(`${report}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
