/**
 * Before `npm run bench` starts anything: the build, the database server and the benchmark's
 * database, the pinning of processes to cores, the source the service was built from, and the
 * cleanups that undo it all at the end or on Ctrl-C.
 */
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DbTarget, connectServer, parseDbUrl, recreateDatabase, withScheme } from '../lib/db';
import { ROOT, log } from '../lib/harness';
import { canPin, findDatabasePid, getAffinity, run, setAffinity } from '../lib/sys';
import { S, START_PROD } from './settings';

/**
 * What to undo at the end, last first; on SIGINT, SIGTERM or SIGHUP too, and when the output goes
 * away (piped to `head`, a closed terminal), then exit 130: a run cut short still gives the
 * database server back all its cores and leaves no target running.
 */
export class Cleanups {
  private readonly steps: (() => Promise<void>)[] = [];
  private done: Promise<void> | undefined;

  constructor() {
    let interrupted = false;
    const onSignal = () => {
      if (interrupted) return;
      interrupted = true;
      log('interrupted: cleaning up');
      void this.runAll().then(() => process.exit(130));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onSignal);
    // A write to a closed pipe fails with EPIPE; unhandled, it would end the process on the spot.
    process.stdout.on('error', onSignal);
    process.stderr.on('error', onSignal);
  }

  add(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  /** Runs the steps once, however many ask (the run's end and an interruption may both). */
  runAll(): Promise<void> {
    this.done ??= (async () => {
      for (const c of this.steps.reverse()) await c().catch((e: unknown) => log(`cleanup: ${String(e)}`));
    })();
    return this.done;
  }
}

export async function buildService(): Promise<void> {
  if (!S.skipBuild) {
    log('building the service (npm run build)');
    try {
      await run('npm', ['run', 'build'], { cwd: ROOT });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      throw new Error(
        `npm run build failed; fix the build (or set BENCH_SKIP_BUILD=1 to use dist/ as it is):\n${e.stdout ?? ''}${e.stderr ?? ''}`,
        { cause: error },
      );
    }
  }
  if (!existsSync(join(ROOT, START_PROD.script))) throw new Error(`${START_PROD.script} is missing: npm run build`);
}

export interface DatabaseServer {
  db: DbTarget;
  conn: Connection;
  info: { version: string; comment: string; pid_file: string | null; bp: string | number };
  /** The service's DATABASE_URL: `mariadb://` on MariaDB, so that it uses its MariaDB dialect. */
  serviceDbUrl: string;
  peerDbUrl: string;
  local: boolean;
}

/** Connects to the server and re-creates the benchmark's database (dropped at the end unless kept). */
export async function openDatabase(cleanups: Cleanups): Promise<DatabaseServer> {
  const db = parseDbUrl(S.databaseUrl);
  const conn = await connectServer(db);
  cleanups.add(() => conn.end());
  const [[info]] = await conn.query<RowDataPacket[]>(
    'SELECT VERSION() AS version, @@version_comment AS comment, @@pid_file AS pid_file, @@innodb_buffer_pool_size AS bp',
  );
  const isMaria = /mariadb/i.test(`${info.version} ${info.comment}`);
  await recreateDatabase(conn, db.database);
  if (!S.keepDatabase) cleanups.add(async () => void (await conn.query(`DROP DATABASE IF EXISTS \`${db.database}\``)));
  return {
    db,
    conn,
    info: info as DatabaseServer['info'],
    serviceDbUrl: withScheme(db, isMaria ? 'mariadb' : 'mysql'),
    peerDbUrl: withScheme(db, 'mysql'),
    local: ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(db.url.hostname),
  };
}

export interface Pinning {
  pin: boolean;
  /** The database server's pid when it runs on this machine. */
  dbPid: number | null;
  /** `cpus` of the service and the peers, and of everything else. */
  cpusService: string | undefined;
  cpusOther: string | undefined;
}

/**
 * The service and the peers on CPU 0; the database server (all its threads), the load generator
 * and this driver on CPU 1. The database server's affinity is restored at the end.
 */
export async function pinProcesses(server: DatabaseServer, notes: string[], cleanups: Cleanups): Promise<Pinning> {
  const pin = S.pin && (await canPin());
  const dbPid = server.local ? findDatabasePid(String(server.info.pid_file ?? '')) : null;
  if (!pin) {
    notes.push('Nothing was pinned (no taskset, fewer than 2 cores, or BENCH_PIN=0): all processes shared all cores.');
  } else {
    await setAffinity(process.pid, '1');
    if (dbPid) {
      const original = await getAffinity(dbPid);
      await setAffinity(dbPid, '1');
      cleanups.add(async () => {
        await setAffinity(dbPid, original);
        log(`database server affinity restored to ${original}`);
      });
    } else {
      notes.push('The database server is not on this machine (or its pid was not found): it was not pinned.');
    }
  }
  return { pin, dbPid, cpusService: pin ? '0' : undefined, cpusOther: pin ? '1' : undefined };
}

/** The commit the service was built from, and whether src/ had uncommitted changes (noted). */
export async function sourceState(notes: string[]): Promise<{ commit: string; dirty: string }> {
  const dirty = (
    await run('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT }).catch(() => ({ stdout: '' }))
  ).stdout.trim();
  const commit = (
    await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).catch(() => ({ stdout: 'unknown' }))
  ).stdout.trim();
  if (dirty)
    notes.push(
      `The service was built from commit ${commit} plus uncommitted changes in src/ (${dirty.split('\n').length} files): the figures are for that working tree.`,
    );
  return { commit, dirty };
}
