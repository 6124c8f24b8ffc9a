/** The benchmark's own database work: set-up, seeding, status counters, SQL trace, EXPLAIN. */
import mysql, { Connection, RowDataPacket } from 'mysql2/promise';
import { sleep } from './sys';

export const COUNTERS = [
  'Questions',
  'Com_select',
  'Com_insert',
  'Com_delete',
  'Com_update',
  'Com_begin',
  'Com_commit',
  'Com_stmt_execute',
] as const;
export type Counter = (typeof COUNTERS)[number];
export type Counters = Record<Counter, number>;

export interface DbTarget {
  /** The URL as given, e.g. mysql://root@127.0.0.1:3306/plantstore_bench */
  url: URL;
  database: string;
}

export function parseDbUrl(text: string): DbTarget {
  const url = new URL(text);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(database))
    throw new Error(`BENCH_DATABASE_URL must name a database ([A-Za-z0-9_]+): ${text}`);
  if (!/bench/i.test(database)) {
    throw new Error(
      `BENCH_DATABASE_URL names "${database}": the benchmark drops and re-creates its database, so the name must contain "bench"`,
    );
  }
  return { url, database };
}

/** The URL with another scheme and/or database, for the service and the peers. */
export function withScheme(target: DbTarget, scheme: 'mysql' | 'mariadb'): string {
  const u = new URL(target.url.toString());
  return `${scheme}://${u.username ? `${u.username}${u.password ? `:${u.password}` : ''}@` : ''}${u.host}/${target.database}`;
}

export async function connectServer(target: DbTarget): Promise<Connection> {
  return mysql.createConnection({
    host: target.url.hostname,
    port: Number(target.url.port || 3306),
    user: decodeURIComponent(target.url.username || 'root'),
    password: decodeURIComponent(target.url.password),
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: true,
    multipleStatements: false,
  });
}

export async function recreateDatabase(conn: Connection, database: string): Promise<void> {
  await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await conn.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await conn.query(`USE \`${database}\``);
}

export async function readCounters(conn: Connection): Promise<Counters> {
  const [rows] = await conn.query<RowDataPacket[]>(
    `SHOW GLOBAL STATUS WHERE Variable_name IN (${COUNTERS.map(() => '?').join(',')})`,
    [...COUNTERS],
  );
  const out = Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counters;
  for (const row of rows) out[row.Variable_name as Counter] = Number(row.Value);
  return out;
}

export function diffCounters(after: Counters, before: Counters, minus?: Counters): Counters {
  return Object.fromEntries(COUNTERS.map((c) => [c, after[c] - before[c] - (minus?.[c] ?? 0)])) as Counters;
}

/**
 * What reading the counters costs the counters themselves (the SHOW statement is a question), and
 * what the rest of the server adds per second while the benchmark is idle (other clients).
 */
export async function measureCounterBaseline(
  conn: Connection,
  idleMs: number,
): Promise<{ selfCost: Counters; idleNoisePerSec: Counters }> {
  const snaps: Counters[] = [];
  for (let i = 0; i < 6; i++) snaps.push(await readCounters(conn));
  const deltas = snaps.slice(1).map((s, i) => diffCounters(s, snaps[i]));
  const selfCost = Object.fromEntries(
    COUNTERS.map((c) => [c, deltas.map((d) => d[c]).sort((a, b) => a - b)[Math.floor(deltas.length / 2)]]),
  ) as Counters;
  const a = await readCounters(conn);
  await sleep(idleMs);
  const b = await readCounters(conn);
  const idle = diffCounters(b, a, selfCost);
  const idleNoisePerSec = Object.fromEntries(COUNTERS.map((c) => [c, idle[c] / (idleMs / 1000)])) as Counters;
  return { selfCost, idleNoisePerSec };
}

/** A derived table of the integers 0 .. 10^digits - 1, as column n, portable to MySQL and MariaDB. */
function integers(digits: number): string {
  const ten =
    '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
  const parts = Array.from({ length: digits }, (_, i) => `${ten} t${i}`);
  const sum = Array.from({ length: digits }, (_, i) => (i === 0 ? 't0.d' : `${10 ** i} * t${i}.d`)).join(' + ');
  return `(SELECT ${sum} AS n FROM ${parts.join(' CROSS JOIN ')})`;
}

/** Inserts `count` plants for one owner with ids from `firstId` upward, in one INSERT ... SELECT. */
export async function seedRange(conn: Connection, owner: string, firstId: bigint, count: number): Promise<void> {
  const digits = Math.max(1, Math.ceil(Math.log10(count + 1)));
  await conn.query(
    `INSERT INTO plants (owner, id, name, tag)
     SELECT ?, ? + s.n, CONCAT('plant ', ? + s.n), IF(s.n % 2 = 0, 'even', NULL)
     FROM ${integers(digits)} s WHERE s.n < ? ORDER BY s.n`,
    [owner, firstId, firstId, count],
  );
}

/**
 * `users` owners named prefix-0001.. with `perUser` plants each (ids 1..perUser), in batches of
 * 100 owners per INSERT ... SELECT, in primary-key order. Owners listed in `skip` are left out.
 */
export async function seedUsers(
  conn: Connection,
  prefix: string,
  users: number,
  perUser: number,
  skip: string[] = [],
): Promise<void> {
  const userDigits = Math.max(1, Math.ceil(Math.log10(users + 1)));
  const plantDigits = Math.max(1, Math.ceil(Math.log10(perUser + 1)));
  const width = Math.max(4, String(users).length);
  for (let from = 0; from < users; from += 100) {
    const to = Math.min(users, from + 100);
    await conn.query(
      `INSERT INTO plants (owner, id, name, tag)
       SELECT CONCAT(?, LPAD(u.n + 1, ?, '0')) AS o, p.n + 1, CONCAT('plant ', p.n + 1), IF(p.n % 2 = 0, 'even', NULL)
       FROM ${integers(userDigits)} u CROSS JOIN ${integers(plantDigits)} p
       WHERE u.n >= ? AND u.n < ? AND p.n < ? HAVING o NOT IN (?)
       ORDER BY u.n, p.n`,
      [prefix, width, from, to, perUser, skip.length > 0 ? skip : ['']],
    );
  }
}

export function ownerName(prefix: string, index: number, users: number): string {
  return `${prefix}${String(index).padStart(Math.max(4, String(users).length), '0')}`;
}

export interface TracedStatement {
  thread: number;
  sql: string;
}

/**
 * Runs `fn` with the general query log on (written to the mysql.general_log table) and returns
 * the statements other connections sent meanwhile. Needs the SUPER privilege; the previous
 * log settings are restored. Null when the log cannot be switched on.
 */
export async function traceStatements(conn: Connection, fn: () => Promise<void>): Promise<TracedStatement[] | null> {
  const [[settings]] = await conn.query<RowDataPacket[]>(
    'SELECT @@global.general_log AS on_, @@global.log_output AS output, CONNECTION_ID() AS me, NOW(6) AS since',
  );
  if (Number(settings.on_) === 1) return null; // someone else is logging: leave it alone
  try {
    await conn.query(`SET GLOBAL log_output = ?`, [
      String(settings.output).includes('TABLE') ? settings.output : `${settings.output},TABLE`,
    ]);
    await conn.query('SET GLOBAL general_log = 1');
  } catch {
    return null;
  }
  try {
    await sleep(100);
    await fn();
    await sleep(300);
  } finally {
    await conn.query('SET GLOBAL general_log = 0');
    await conn.query('SET GLOBAL log_output = ?', [settings.output]);
  }
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT thread_id, CONVERT(argument USING utf8mb4) AS sql_text FROM mysql.general_log
     WHERE event_time >= ? AND thread_id <> ? AND command_type IN ('Query', 'Execute')
     ORDER BY event_time`,
    [settings.since, settings.me],
  );
  return rows
    .map((r) => ({ thread: Number(r.thread_id), sql: String(r.sql_text) }))
    .filter((r) => !/^(SET GLOBAL|SELECT @@global)/i.test(r.sql));
}

export interface ExplainResult {
  sql: string;
  rows: Record<string, unknown>[];
  analyze?: Record<string, unknown>[];
}

export async function explain(conn: Connection, sql: string): Promise<ExplainResult> {
  const [rows] = await conn.query<RowDataPacket[]>(`EXPLAIN ${sql}`);
  let analyze: Record<string, unknown>[] | undefined;
  try {
    // MariaDB: ANALYZE runs the statement and adds the rows actually read (r_rows).
    const [a] = await conn.query<RowDataPacket[]>(`ANALYZE ${sql}`);
    analyze = a.map((r) => ({ ...r }));
  } catch {
    try {
      // MySQL 8: EXPLAIN ANALYZE, a tree with the actual rows and timings.
      const [a] = await conn.query<RowDataPacket[]>(`EXPLAIN ANALYZE ${sql}`);
      analyze = a.map((r) => ({ ...r }));
    } catch {
      analyze = undefined;
    }
  }
  return { sql, rows: rows.map((r) => ({ ...r })), analyze };
}
