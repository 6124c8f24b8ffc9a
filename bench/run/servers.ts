/**
 * The targets of `npm run bench`: the service as it ships and the two reference peers
 * (reference/), started pinned beside each other, with the tokens the load uses.
 */
import { join } from 'node:path';
import { OUT, ROOT, issueToken, log } from '../lib/harness';
import { Spawned, readMemory, sleep, startProcess, stopProcess, waitForHttp } from '../lib/sys';
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

/** The service's environment: production, no rate limit or metrics listener in the way. */
export function serviceEnvironment(server: DatabaseServer): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of NOT_INHERITED) delete env[key];
  return Object.assign(env, {
    NODE_ENV: 'production',
    DATABASE_URL: server.serviceDbUrl,
    HOST: '127.0.0.1',
    PORT: String(S.portBase),
    // info, the default: production writes a line per request, so the comparison pays for it.
    LOG_LEVEL: S.logLevel,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    METRICS_PORT: '0',
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

/** The Express peer and the node:http floor on the next two ports, with the service's Node flags. */
export async function startTargets(
  service: Spawned,
  server: DatabaseServer,
  cpus: string | undefined,
  cleanups: Cleanups,
): Promise<Target[]> {
  const peerEnv = (port: number): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: server.peerDbUrl,
    DB_POOL_SIZE: String(S.poolSize),
    TOKEN_CACHE_TTL_MS: String(S.peerTokenTtlMs),
    NODE_ENV: 'production',
  });
  const peer = (name: string, file: string, port: number) =>
    start([name, file], nodeCommand(join(BENCH_JS, 'reference', `${file}.js`)), peerEnv(port), cpus, cleanups);
  const express = peer('express peer', 'express-peer', S.portBase + 1);
  const nodehttp = peer('node:http peer', 'node-http-peer', S.portBase + 2);
  const targets: Target[] = [
    { name: 'service', proc: service, url: `http://127.0.0.1:${S.portBase}` },
    { name: 'express', proc: express, url: `http://127.0.0.1:${S.portBase + 1}` },
    { name: 'nodehttp', proc: nodehttp, url: `http://127.0.0.1:${S.portBase + 2}` },
  ];
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
