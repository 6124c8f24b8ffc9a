/** The settings of `npm run bench` (BENCH_*, bench/README.md), and the constants of its scenarios. */
import { join } from 'node:path';
import { integer, seconds } from '../lib/env';
import { ROOT, startProd } from '../lib/harness';
import type { SchemaChangeWay } from '../lib/schema-change';

function schemaWay(text: string): SchemaChangeWay {
  if (text === 'TOI' || text === 'RSU' || text === 'runner') return text;
  throw new Error(`not a way of changing a schema: "${text}" (TOI, RSU, runner)`);
}

const env = process.env;
export const QUICK = env.BENCH_QUICK === '1';

export const S = {
  databaseUrl: env.BENCH_DATABASE_URL || 'mysql://root@127.0.0.1:3306/plantstore_bench',
  rounds: integer(env.BENCH_ROUNDS, QUICK ? 2 : 7),
  durationSec: seconds(env.BENCH_DURATION, QUICK ? 3 : 10),
  warmupSec: seconds(env.BENCH_WARMUP, QUICK ? 1 : 3),
  connections: integer(env.BENCH_CONNECTIONS, 32),
  poolSize: integer(env.BENCH_POOL_SIZE, 10),
  scaleRows: integer(env.BENCH_SCALE_ROWS, QUICK ? 100_000 : 1_000_000),
  scaleRounds: integer(env.BENCH_SCALE_ROUNDS, QUICK ? 1 : 3),
  singleSec: seconds(env.BENCH_SINGLE_DURATION, QUICK ? 2 : 5),
  scenarios: (env.BENCH_SCENARIOS || 'list,create,delete,mix').split(',').map((s) => s.trim()),
  scale: env.BENCH_SCALE !== '0',
  profile: env.BENCH_PROFILE !== '0',
  trace: env.BENCH_TRACE !== '0',
  pin: env.BENCH_PIN !== '0',
  quiet: env.BENCH_QUIET !== '0',
  quietThreshold: Number(env.BENCH_QUIET_THRESHOLD || 0.15),
  quietMaxWaitSec: seconds(env.BENCH_QUIET_MAX_WAIT, 120),
  quietBudgetSec: seconds(env.BENCH_QUIET_BUDGET, 600),
  skipBuild: env.BENCH_SKIP_BUILD === '1',
  logLevel: env.BENCH_LOG_LEVEL || 'info',
  keepDatabase: env.BENCH_KEEP_DATABASE === '1',
  portBase: integer(env.BENCH_PORT_BASE, 3101),
  peerTokenTtlMs: integer(env.BENCH_PEER_TOKEN_TTL_MS, 5000),
  clusterPortBase: integer(env.BENCH_CLUSTER_PORT_BASE, 14700),
  causalStatements: integer(env.BENCH_CAUSAL_STATEMENTS, QUICK ? 500 : 3000),
  faultRounds: integer(env.BENCH_FAULT_ROUNDS, QUICK ? 1 : 3),
  /** Sizes of `plants` for the cluster's schema-change drill, ascending; `0` skips it. */
  schemaRows: (env.BENCH_SCHEMA_ROWS || (QUICK ? '100000' : '100000,1000000'))
    .split(',')
    .map((n) => integer(n.trim(), 0))
    .filter((n) => n > 0),
  schemaWays: (env.BENCH_SCHEMA_WAYS || 'TOI,RSU,runner').split(',').map((way) => schemaWay(way.trim())),
  /** A partial run (BENCH_REPORT_DIR) reports beside the full one instead of replacing it. */
  reportDir: env.BENCH_REPORT_DIR ? join(ROOT, env.BENCH_REPORT_DIR) : join(ROOT, 'bench'),
};

/** The compiled bench code (the peers, the load generator, the profile hook). */
export const BENCH_JS = join(__dirname, '..');
export const PLANTS_PER_USER = 1000;
/** Ids of created plants start beyond 2^53, where a double could not hold them. */
export const CREATE_BASE = 2n ** 53n;
/** Ids seeded for deletes start here, far from the 1..1000 that lists read. */
export const POOL_BASE = 10n ** 12n;

/**
 * The service runs as it ships: the command line of `npm run start:prod` (the Dockerfile's CMD),
 * `node <flags> dist/main.js`. Its Node flags are the runtime's, not the framework's, so the peers
 * run with them too: the distance between the targets stays what the code costs. BENCH_NODE_FLAGS
 * replaces the flags for every target, to measure what a runtime flag is worth.
 */
export const START_PROD = startProd(ROOT, env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean));

/** `node <the service's flags> <script> ...`, on the Node.js that runs the benchmark. */
export const nodeCommand = (...script: string[]): string[] => [process.execPath, ...START_PROD.nodeFlags, ...script];
