/**
 * What the stall drill (stall.ts) captures at the moment a target stops answering: the database's
 * view (its processlist, `SHOW ENGINE INNODB STATUS`, and how long a plain INSERT and the service's
 * guarded INSERT take on connections of their own right then), and the target's (its main
 * thread's state and kernel stack, its CPU, the bytes waiting unread in its sockets, and, for the
 * service, its event-loop delay from its own metrics).
 */
import { readFileSync, statSync } from 'node:fs';
import mysql, { Connection, RowDataPacket } from 'mysql2/promise';
import { DbTarget } from './db';
import { cpuSeconds, run, sleep } from './sys';

/** A connection of the drill's own to the benchmark database. */
export async function connectDatabase(db: DbTarget): Promise<Connection> {
  const conn = await mysql.createConnection({
    host: db.url.hostname,
    port: Number(db.url.port || 3306),
    user: decodeURIComponent(db.url.username || 'root'),
    password: decodeURIComponent(db.url.password),
    database: db.database,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  // A probe waits for a lock at most this long: it measures a stall, it does not join it.
  await conn.query('SET SESSION innodb_lock_wait_timeout = 3');
  return conn;
}

export interface TargetProcess {
  name: string;
  pid: number;
  port: number;
  /** The service's metrics listener, to read its event-loop delay from. */
  metricsPort?: number;
  logPath: string;
}

export interface Capture {
  at: number;
  /** The main thread: its state (R running, S sleeping, D in the disk), the kernel function it waits in, its syscall. */
  thread: { state: string; wchan: string; syscall: string; stack: string };
  /** CPU the target used in the half second of the capture, as a share of a core. */
  cpuShare: number;
  /** Its sockets: established connections on its port and the bytes they hold unread, and its accept queue. */
  sockets: { established: number; unreadBytes: number; withUnread: number; acceptQueue: number };
  /** The event-loop delay as the target reports it, or why it did not (no answer within a second). */
  eventLoop: string;
  logBytes: number;
  /** How long each probe statement took, or how it failed. */
  plainInsert: string;
  guardedInsert: string;
  processlist: string[];
  innodb: { summary: string[]; full: string };
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    return `(${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`;
  }
}

function mainThread(pid: number): Capture['thread'] {
  const stat = readText(`/proc/${pid}/task/${pid}/stat`);
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?';
  return {
    state,
    wchan: readText(`/proc/${pid}/task/${pid}/wchan`),
    syscall: readText(`/proc/${pid}/task/${pid}/syscall`),
    stack: readText(`/proc/${pid}/task/${pid}/stack`),
  };
}

/** `ss` on the target's port: established connections and their receive queues, and the listener's accept queue. */
async function sockets(port: number): Promise<Capture['sockets']> {
  const { stdout } = await run('ss', ['-tnH', 'state', 'all', `( sport = :${port} )`]).catch(() => ({ stdout: '' }));
  const out = { established: 0, unreadBytes: 0, withUnread: 0, acceptQueue: 0 };
  for (const line of stdout.split('\n')) {
    const [state, recvQ] = line.trim().split(/\s+/);
    if (state === 'ESTAB') {
      out.established++;
      out.unreadBytes += Number(recvQ);
      if (Number(recvQ) > 0) out.withUnread++;
    } else if (state === 'LISTEN') {
      out.acceptQueue = Number(recvQ);
    }
  }
  return out;
}

/** The service's event-loop delay from its own metrics listener, read within a second or not at all. */
async function eventLoop(target: TargetProcess): Promise<string> {
  if (target.metricsPort === undefined) return 'no metrics listener';
  const started = Date.now();
  try {
    const response = await fetch(`http://127.0.0.1:${target.metricsPort}/metrics`, {
      signal: AbortSignal.timeout(1000),
    });
    const text = await response.text();
    const value = (name: string) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1]) * 1000;
    return (
      `answered in ${Date.now() - started} ms: lag ${value('nodejs_eventloop_lag_seconds').toFixed(1)} ms, ` +
      `p99 ${value('nodejs_eventloop_lag_p99_seconds').toFixed(1)} ms, max ${value('nodejs_eventloop_lag_max_seconds').toFixed(1)} ms since start`
    );
  } catch {
    return `no answer within 1 s (${Date.now() - started} ms): the event loop is not running`;
  }
}

/** One statement timed on its own connection. */
async function timed(conn: Connection, sql: string, parameters: unknown[]): Promise<string> {
  const started = Date.now();
  try {
    await conn.query({ sql, timeout: 10_000 }, parameters);
    return `${Date.now() - started} ms`;
  } catch (error) {
    return `failed after ${Date.now() - started} ms: ${(error as { code?: string }).code ?? String(error)}`;
  }
}

/**
 * The lines of `SHOW ENGINE INNODB STATUS` that tell a redo stall (the log and checkpoint, pending
 * flushes) or a lock wait in the benchmark's database (the transactions that name it; the status is
 * the whole server's, other databases' transactions are left out).
 */
function innodbSummary(status: string, database: string): string[] {
  const server =
    /^(Log sequence number|Log flushed up to|Pages flushed up to|Last checkpoint at|Modified db pages|Pending|History list length)/;
  const locks = /(ACTIVE|LOCK WAIT|WAITING FOR THIS LOCK|RECORD LOCKS|TABLE LOCK)/;
  const out: string[] = [];
  let transaction: string[] = [];
  const endTransaction = () => {
    if (transaction.some((line) => line.includes(`\`${database}\``)))
      out.push(...transaction.filter((l) => locks.test(l)));
    transaction = [];
  };
  for (const line of status.split('\n')) {
    if (line.startsWith('---TRANSACTION') || line.startsWith('--------')) endTransaction();
    if (line.startsWith('---TRANSACTION')) transaction = [line];
    else if (transaction.length > 0) transaction.push(line);
    else if (server.test(line)) out.push(line.trim());
  }
  endTransaction();
  return out.slice(0, 60);
}

async function databaseView(conn: Connection, database: string): Promise<Pick<Capture, 'processlist' | 'innodb'>> {
  const [list] = await conn.query<RowDataPacket[]>(
    'SELECT ID, COMMAND, TIME, STATE, LEFT(INFO, 160) AS INFO FROM information_schema.PROCESSLIST ' +
      'WHERE DB = ? AND ID <> CONNECTION_ID() ORDER BY TIME DESC',
    [database],
  );
  const [[innodb]] = await conn.query<RowDataPacket[]>('SHOW ENGINE INNODB STATUS');
  const full = String(innodb.Status);
  return {
    processlist: list.map((r) => `${r.ID} ${r.COMMAND} ${r.TIME}s ${r.STATE ?? ''} ${r.INFO ?? ''}`.trim()),
    innodb: { summary: innodbSummary(full, database), full },
  };
}

export interface Probes {
  view: Connection;
  plain: Connection;
  guarded: Connection;
  owner: string;
  /** The guarded INSERT exactly as the service sends it for an owner (EventOutbox, PlantsRepository). */
  guardedSql: string;
  nextId: bigint;
}

/** Everything at once: the target first (before a probe's connection could wake it), then the database. */
export async function capture(target: TargetProcess, probes: Probes): Promise<Capture> {
  const at = Date.now();
  const thread = mainThread(target.pid);
  const cpu0 = cpuSeconds(target.pid);
  const socketsNow = await sockets(target.port);
  let logBytes = NaN;
  try {
    logBytes = statSync(target.logPath).size;
  } catch {
    // no log file yet
  }
  const [loop, view, plainInsert, guardedInsert] = await Promise.all([
    sleep(500).then(() => eventLoop(target)),
    databaseView(probes.view, probes.view.config.database!),
    timed(probes.plain, 'INSERT INTO plants (owner, id, name, tag) VALUES (?, ?, ?, NULL)', [
      probes.owner,
      String(probes.nextId++),
      'stall probe',
    ]),
    timed(probes.guarded, probes.guardedSql, [
      probes.owner,
      String(probes.nextId++),
      'stall probe',
      null,
      probes.owner,
    ]),
  ]);
  return {
    at,
    thread,
    cpuShare: (cpuSeconds(target.pid) - cpu0) / ((Date.now() - at) / 1000),
    sockets: socketsNow,
    eventLoop: loop,
    logBytes,
    plainInsert,
    guardedInsert,
    ...view,
  };
}
