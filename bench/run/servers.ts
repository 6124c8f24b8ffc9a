/**
 * The targets of `npm run bench`: the service as it ships and the reference peers (reference/),
 * started pinned beside each other, with the tokens the load uses.
 */
import { join } from 'node:path';
import { OUT, RATE_LIMIT_NEVER_REACHED, ROOT, issueToken, log } from '../lib/harness';
import { Spawned, readMemory, sleep, startProcess, stopProcess, waitForHttp } from '../lib/sys';
import { TARGETS, TARGET_LABEL, TargetName } from '../lib/types';
import type { Target } from './context';
import type { Cleanups, DatabaseServer } from './setup';
import { BENCH_JS, S, START_PROD, nodeCommand } from './settings';

/** Settings of the caller's environment that would change what the service does. */
const NOT_INHERITED = [
  'DATABASE_URL',
  'SQLITE_PATH',
  'REDIS_URL',
  'CORS_ORIGINS',
  'TRUST_PROXY',
  'PLANTS_MAX_PAGE',
  'LOG_FORMAT',
  'HOST',
  'PORT',
];

/**
 * What the service and the production peer run with: the log level (a line per request at info,
 * the default, as production writes it, so the comparison pays for it), a rate limit that counts
 * every request but refuses none, and metrics on a free port of their own.
 */
const PRODUCTION_SETTINGS = {
  LOG_LEVEL: S.logLevel,
  RATE_LIMIT_PER_MINUTE: RATE_LIMIT_NEVER_REACHED,
  METRICS_PORT: '0',
};

/** The service's environment: production, on the benchmark's database. */
export function serviceEnvironment(server: DatabaseServer): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of NOT_INHERITED) delete env[key];
  return Object.assign(env, PRODUCTION_SETTINGS, {
    NODE_ENV: 'production',
    DATABASE_URL: server.serviceDbUrl,
    HOST: '127.0.0.1',
    PORT: String(S.portBase),
    DB_POOL_SIZE: String(S.poolSize),
  });
}

/** A process of the benchmark, stopped by `cleanups`. */
function start(
  [name, logName]: [string, string],
  command: string[],
  env: NodeJS.ProcessEnv,
  cpus: string | undefined,
  cleanups: Cleanups,
) {
  const proc = startProcess(name, command, { env, cwd: ROOT, cpus, logPath: join(OUT, `${logName}.log`) });
  cleanups.add(() => stopProcess(proc));
  return proc;
}

/** Starts the service (it runs its migrations) and returns it with its resident memory when idle. */
export async function startService(
  serviceEnv: NodeJS.ProcessEnv,
  cpus: string | undefined,
  cleanups: Cleanups,
): Promise<{ service: Spawned; idleRssMb: number | null }> {
  log(`starting the service on :${S.portBase} (runs its migrations)`);
  const service = start(['service', 'service'], nodeCommand(START_PROD.script), serviceEnv, cpus, cleanups);
  await waitForHttp(`http://127.0.0.1:${S.portBase}/plants`, service);
  await sleep(1000);
  return { service, idleRssMb: readMemory(service.pid)?.rssMb ?? null };
}

type PeerName = Exclude<TargetName, 'service'>;

/** Each peer's script in reference/ (its log is named after it), its port after the service's, and its own settings. */
const PEERS: Record<PeerName, { file: string; portOffset: number; env?: NodeJS.ProcessEnv }> = {
  express: { file: 'express-peer', portOffset: 1 },
  nodehttp: { file: 'node-http-peer', portOffset: 2 },
  expressprod: { file: 'express-prod-peer', portOffset: 3, env: PRODUCTION_SETTINGS },
};

/** The peers on the ports after the service's, with the service's Node flags; all targets in the order of TARGETS. */
export async function startTargets(
  service: Spawned,
  server: DatabaseServer,
  cpus: string | undefined,
  cleanups: Cleanups,
): Promise<Target[]> {
  const startPeer = (name: PeerName): Target => {
    const { file, portOffset, env } = PEERS[name];
    const port = S.portBase + portOffset;
    const peerEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: server.peerDbUrl,
      DB_POOL_SIZE: String(S.poolSize),
      TOKEN_CACHE_TTL_MS: String(S.peerTokenTtlMs),
      NODE_ENV: 'production',
      ...env,
    };
    const command = nodeCommand(join(BENCH_JS, 'reference', `${file}.js`));
    const proc = start([TARGET_LABEL[name], file], command, peerEnv, cpus, cleanups);
    return { name, proc, url: `http://127.0.0.1:${port}` };
  };
  const targets = TARGETS.map((name) =>
    name === 'service' ? { name, proc: service, url: `http://127.0.0.1:${S.portBase}` } : startPeer(name),
  );
  for (const t of targets) await waitForHttp(`${t.url}/plants`, t.proc);
  return targets;
}

/** Tokens of `users`, through the service's own command line. */
export async function createTokens(serviceEnv: NodeJS.ProcessEnv, users: string[]): Promise<Record<string, string>> {
  log(`creating tokens with node dist/cli.js for ${users.join(', ')}`);
  const tokens: Record<string, string> = {};
  for (const user of users) tokens[user] = await issueToken(ROOT, serviceEnv, user);
  return tokens;
}
