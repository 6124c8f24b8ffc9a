/** What the benchmarks that answer one question (log-line.ts, jwt-list.ts) share. */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from 'mysql2/promise';
import { DbTarget, connectServer, parseDbUrl, recreateDatabase, withScheme } from './db';
import { run } from './sys';

export const LIST_PATH = '/plants?limit=20';

export const log = (message: string) =>
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** The command line of `npm run start:prod` (`node <flags> dist/main.js`), with this Node.js. */
export function startProdArgv(root: string): string[] {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts['start:prod'];
  const [node, ...rest] = script.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`npm run start:prod is not "node [flags] <script>": ${script}`);
  return [process.execPath, ...rest];
}

/**
 * The environment of an instance these benchmarks start: production, on the benchmark database
 * (`mariadb://` for a MariaDB server), no rate limit or metrics listener in the way. Each adds its
 * own LOG_LEVEL and PORT.
 */
export function serviceEnvironment(db: DbTarget, serverVersion: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    DATABASE_URL: withScheme(db, /mariadb/i.test(serverVersion) ? 'mariadb' : 'mysql'),
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    METRICS_PORT: '0',
  };
}

/** The list load: `GET /plants?limit=20` with one token, for `seconds`. */
export function listLoad(
  port: number,
  token: string,
  seconds: number,
  connections: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}${LIST_PATH}`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `[min–max]` of ratios, three decimals. */
export const range = (values: number[]) => `[${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}]`;

/** The benchmark's own database, dropped and created anew, and the server's version. */
export async function freshBenchDatabase(url: string): Promise<{ db: DbTarget; conn: Connection; version: string }> {
  const db = parseDbUrl(url);
  if (!db.database.includes('bench')) throw new Error('BENCH_DATABASE_URL must name a database containing "bench"');
  const conn = await connectServer(db);
  const [[{ version }]] = (await conn.query('SELECT VERSION() AS version')) as unknown as [[{ version: string }]];
  await recreateDatabase(conn, db.database);
  return { db, conn, version };
}

/** A `pst_` token for `user`, issued with the build's command line against the service's database. */
export async function issueToken(root: string, serviceEnv: NodeJS.ProcessEnv, user: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['dist/cli.js', 'token', 'create', '--user', user], {
    cwd: root,
    env: { ...serviceEnv, LOG_LEVEL: 'error' },
  });
  const token = stdout.trim().split('\n').pop()!.trim();
  if (!token.startsWith('pst_')) throw new Error(`token create printed no token:\n${stdout}`);
  return token;
}
