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
import { join } from 'node:path';
import { seedRange } from './lib/db';
import {
  Measured,
  OUT,
  ROOT,
  compareOnOneInstance,
  finishStandalone,
  issueToken,
  listLoad,
  pairRounds,
  prepareStandalone,
  runMain,
  serviceEnvironment,
  standaloneSettings,
  startProdArgv,
} from './lib/harness';
import { Round, median, ratioSummary } from './lib/side-by-side';
import { Spawned, startProcess, stopProcess, waitForHttp } from './lib/sys';

const S = standaloneSettings({
  roundsVariable: 'BENCH_JWT_ROUNDS',
  rounds: 7,
  databaseUrl: 'mysql://root@127.0.0.1:3306/plantstore_bench_jwt',
  portBase: 3301,
});
/** The owner of both tokens: the JWT's `sub` is its client id. */
const USER = 'bench-jwt';
const AUDIENCE = 'https://plants.bench';
const CLIENT_SECRET = 'bench-jwt-client-secret-0123456789abcdef';
const TARGET = 0.95;
/** The reference first: the ratios are jwt ÷ pst. */
const KINDS = ['pst', 'jwt'] as const;
type Kind = (typeof KINDS)[number];
const ISSUER = `http://127.0.0.1:${S.portBase + 1}`;

/** panva's oidc-provider as the e2e tests run it, issuing RS256 client-credentials JWTs for USER. */
async function startProvider(cpus: string | undefined): Promise<Spawned> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
  return startProcess('openid provider', [process.execPath, join(ROOT, 'test/utils/openid-provider-process.mjs')], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      OIDC_TEST_PROVIDER: JSON.stringify({
        port: S.portBase + 1,
        jwks: { keys: [jwk] },
        audience: AUDIENCE,
        clients: [{ client_id: USER, client_secret: CLIENT_SECRET, scope: 'plants:read plants:write' }],
        accessTokenTtlS: 3600,
      }),
    },
    cwd: ROOT,
    cpus,
    logPath: join(OUT, 'jwt-list-provider.log'),
  });
}

async function providerToken(): Promise<string> {
  const res = await fetch(`${ISSUER}/token`, {
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

function compareTokens(service: Spawned, tokens: Record<Kind, string>) {
  const load = (kind: Kind, sec: number) => listLoad(S.portBase, tokens[kind], sec, S.connections);
  return compareOnOneInstance({
    kinds: KINDS,
    workload: 'list',
    pid: service.pid,
    rounds: S.rounds,
    warmupSec: S.warmupSec,
    durationSec: S.durationSec,
    load,
  });
}

function report(rounds: Round<'list', Measured>[], version: string, pin: boolean): string {
  const { table, rps, cpu } = pairRounds(
    rounds.map((r) => r.list),
    KINDS,
  );
  return [
    ...table,
    '',
    `JWT ÷ pst list throughput, median of ${rounds.length} rounds: ${ratioSummary(rps, true)} ` +
      `(target: at least ${TARGET}, ${median(rps) >= TARGET ? 'met' : 'NOT met'}); in requests per CPU-second: ${ratioSummary(cpu)}.`,
    '',
    `Settings: ${S.rounds} rounds of ${S.durationSec} s per token after ${S.warmupSec} s of warm-up each, ${S.connections} connections, ` +
      `\`${startProdArgv(ROOT).slice(1).join(' ')}\`, LOG_LEVEL=warn, Node.js ${process.version}, ${version}, RS256 JWT from oidc-provider, ` +
      `${pin ? 'the service on CPU 0, load, provider and database on CPU 1' : 'not pinned'}.`,
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await prepareStandalone(S);
  const provider = await startProvider(bench.pin ? '1' : undefined);
  const serviceEnv: NodeJS.ProcessEnv = {
    ...serviceEnvironment(bench.db, bench.version),
    PORT: String(S.portBase),
    LOG_LEVEL: 'warn',
    OIDC_ISSUER: ISSUER,
    OIDC_AUDIENCE: AUDIENCE,
  };
  const pst = await issueToken(ROOT, serviceEnv, USER);
  await seedRange(bench.conn, USER, 1n, 1000);
  const service = startProcess('service', startProdArgv(ROOT), {
    env: serviceEnv,
    cwd: ROOT,
    cpus: bench.serviceCpus,
    logPath: join(OUT, 'jwt-list-service.log'),
  });
  let rounds: Round<'list', Measured>[];
  try {
    await waitForHttp(`${ISSUER}/.well-known/openid-configuration`, provider);
    await waitForHttp(`http://127.0.0.1:${S.portBase}/health/live`, service);
    rounds = await compareTokens(service, { pst, jwt: await providerToken() });
  } finally {
    await stopProcess(service);
    await stopProcess(provider);
  }
  await finishStandalone(bench, join(OUT, 'jwt-list.md'), report(rounds, bench.version, bench.pin));
}

runMain(main);
