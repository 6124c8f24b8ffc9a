/**
 * The scale scenario: the list with 1,000 rows in the table, then with BENCH_SCALE_ROWS rows over
 * many users, and `EXPLAIN` of the service's own list statements on the large table.
 */
import type { RowDataPacket } from 'mysql2/promise';
import { explain, seedRange, seedUsers, traceStatements } from '../lib/db';
import { LIST_PATH, log } from '../lib/harness';
import { runSideBySide } from '../lib/side-by-side';
import { sleep } from '../lib/sys';
import { BenchResults, RoundResult, ScaleResult } from '../lib/types';
import { request } from './checks';
import type { Context } from './context';
import { describe, job, measure } from './load';
import { PLANTS_PER_USER, S } from './settings';

/** The list of `owner` on every target, with the usual connections and then with one. */
async function runScalePhase(ctx: Context, label: string, owner: string, users: number): Promise<ScaleResult> {
  const [[{ n }]] = await ctx.conn.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM plants');
  log(`scale ${label}: ${n} rows in the table`);
  const list = { kind: 'list', path: LIST_PATH } as const;
  const loaded: RoundResult[] = [];
  const single: RoundResult[] = [];
  await runSideBySide({
    sides: ctx.targets.map((target) => ({
      name: target.name,
      warm: async () => void (await ctx.loadgen.run(job(ctx, target, owner, list, S.warmupSec))),
      measure: async (_workload, round) => {
        const r = await measure(ctx, target, round + 1, job(ctx, target, owner, list, S.durationSec));
        loaded.push(r);
        log(`scale ${label} ${round + 1}/${S.scaleRounds} ${describe(r)}`);
        if (S.singleSec > 0) {
          const r1 = await measure(ctx, target, round + 1, job(ctx, target, owner, list, S.singleSec, 1));
          single.push(r1);
          log(`scale ${label} ${round + 1}/${S.scaleRounds} 1 conn ${describe(r1)}`);
        }
      },
    })),
    workloads: ['list'],
    rounds: S.scaleRounds,
  });
  return { label, rowsInTable: Number(n), users, loaded, single };
}

/** The table emptied with 1,000 rows for `owner`, measured, then filled to BENCH_SCALE_ROWS and measured again. */
export async function runScale(ctx: Context, owner: string, users: number): Promise<ScaleResult[]> {
  const { conn } = ctx;
  log('scale: emptying the table; 1,000 rows for one user');
  await conn.query('TRUNCATE TABLE plants');
  await seedRange(conn, owner, 1n, PLANTS_PER_USER);
  await conn.query('ANALYZE TABLE plants');
  const small = await runScalePhase(ctx, `${PLANTS_PER_USER.toLocaleString('en-US')} rows`, owner, 1);
  log(`scale: filling the table to ${S.scaleRows.toLocaleString('en-US')} rows over ${users} users`);
  const t0 = Date.now();
  await seedUsers(conn, 'scale-', users, PLANTS_PER_USER, [owner]);
  await conn.query('ANALYZE TABLE plants');
  log(`scale: seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await sleep(2000);
  return [small, await runScalePhase(ctx, `${S.scaleRows.toLocaleString('en-US')} rows`, owner, users)];
}

/** EXPLAIN the service's own list statements, as the general log saw them, and the peers' shape. */
export async function explainLists(ctx: Context, owner: string): Promise<BenchResults['explain']> {
  const { conn } = ctx;
  const svc = ctx.targets[0];
  const captured = S.trace
    ? await traceStatements(conn, async () => {
        await request(svc.url, 'GET', LIST_PATH, ctx.tokens[owner]);
        await request(svc.url, 'GET', `${LIST_PATH}&after=500`, ctx.tokens[owner]);
      })
    : null;
  const selects = (captured ?? [])
    .map((s) => s.sql)
    .filter((sql) => /^\s*SELECT/i.test(sql) && /FROM\s+`?plants`?/i.test(sql));
  const explains: BenchResults['explain'] = [];
  if (selects.length >= 2) {
    explains.push({ label: 'service, first page', result: await explain(conn, selects[0]) });
    explains.push({ label: 'service, page after id 500', result: await explain(conn, selects[1]) });
  } else {
    const shape = (after: boolean) =>
      `SELECT owner, id, name, tag FROM plants WHERE owner = ${conn.escape(owner)}${after ? ' AND id > 500' : ''} ORDER BY id ASC LIMIT 21`;
    explains.push({
      label: 'service (shape of its query; the log was not available), first page',
      result: await explain(conn, shape(false)),
    });
    explains.push({
      label: 'service (shape of its query; the log was not available), page after id 500',
      result: await explain(conn, shape(true)),
    });
  }
  explains.push({
    label: 'peers, page after id 500',
    result: await explain(
      conn,
      `SELECT id, name, tag FROM plants WHERE owner = ${conn.escape(owner)} AND id > 500 ORDER BY id LIMIT 21`,
    ),
  });
  return explains;
}
