/**
 * The scenarios of `npm run bench` (list, create, delete, mix): each a workload of the load
 * generator run against the service and its peers side by side (lib/side-by-side.ts). To add one,
 * add its spec to SCENARIOS; BENCH_SCENARIOS names it and RESULTS.md gets its section.
 */
import { log } from '../lib/harness';
import { runSideBySide } from '../lib/side-by-side';
import { RoundResult, ScenarioResult } from '../lib/types';
import type { LoadResult, Workload } from '../loadgen';
import type { Context } from './context';
import { deleteBudget, describe, ensurePool, job, measure } from './load';
import { CREATE_BASE, S } from './settings';
import { LIST_PATH } from '../lib/harness';

export interface ScenarioSpec {
  name: string;
  title: string;
  description: string;
  user: string;
  /** Deletes per request, to size the pool of seeded ids. */
  deleteShare: number;
  /** The next run's workload, from the id counters of `ctx`. */
  workload: (ctx: Context) => Workload;
  /** Takes the id counters of a run back into `ctx`. */
  after: (ctx: Context, result: LoadResult) => void;
}

export const SCENARIOS: ScenarioSpec[] = [
  {
    name: 'list',
    title: 'list: GET /plants?limit=20, a user with 1,000 plants',
    description: 'The first page of 20 of a user holding 1,000 plants; one keyset SELECT per request.',
    user: 'bench-list',
    deleteShare: 0,
    workload: () => ({ kind: 'list', path: LIST_PATH }),
    after: () => undefined,
  },
  {
    name: 'create',
    title: 'create: POST /plants with a fresh id each request',
    description: `Each request creates a plant with a new id (counting up from 2^53 = ${CREATE_BASE}, so ids are beyond what a double holds); one INSERT per request.`,
    user: 'bench-create',
    deleteShare: 0,
    workload: (ctx) => ({ kind: 'create', nextId: String(ctx.createNext.get('bench-create') ?? CREATE_BASE) }),
    after: (ctx, r) => ctx.createNext.set('bench-create', BigInt(r.nextCreateId!)),
  },
  {
    name: 'delete',
    title: 'delete: DELETE /plants/{id} of existing plants, in order',
    description:
      'Ids seeded before each round are deleted in order, each once; 204 is a deleted plant, 404 would be an id that was not there. One DELETE per request.',
    user: 'bench-delete',
    deleteShare: 1,
    workload: (ctx) => ({ kind: 'delete', nextId: String(ctx.pools.get('bench-delete')!.next) }),
    after: (ctx, r) => {
      ctx.pools.get('bench-delete')!.next = BigInt(r.nextDeleteId!);
    },
  },
  {
    name: 'mix',
    title: 'mix: 80% list, 15% create, 5% delete',
    description:
      'One user with 1,000 plants; a fixed cycle of 20 requests per connection: 16 lists (limit=20), 3 creates of fresh ids, 1 delete of a seeded id.',
    user: 'bench-mix',
    deleteShare: 0.05,
    workload: (ctx) => ({
      kind: 'mix',
      listPath: LIST_PATH,
      nextCreateId: String(ctx.createNext.get('bench-mix') ?? CREATE_BASE),
      nextDeleteId: String(ctx.pools.get('bench-mix')!.next),
    }),
    after: (ctx, r) => {
      ctx.createNext.set('bench-mix', BigInt(r.nextCreateId!));
      ctx.pools.get('bench-mix')!.next = BigInt(r.nextDeleteId!);
    },
  },
];

export function scenarioNamed(name: string): ScenarioSpec {
  const spec = SCENARIOS.find((s) => s.name === name);
  if (!spec) throw new Error(`unknown scenario "${name}" in BENCH_SCENARIOS (list, create, delete, mix, cluster)`);
  return spec;
}

/** A warm-up per target, then rounds of the targets in alternating order. */
export async function runScenario(ctx: Context, spec: ScenarioSpec): Promise<ScenarioResult> {
  log(`scenario ${spec.name}: warm-up ${S.warmupSec}s per target`);
  const rounds: RoundResult[] = [];
  await runSideBySide({
    sides: ctx.targets.map((target) => ({
      name: target.name,
      warm: async () => {
        if (spec.deleteShare > 0)
          await ensurePool(ctx, spec.user, deleteBudget(ctx, target.name, S.warmupSec, spec.deleteShare));
        spec.after(ctx, await ctx.loadgen.run(job(ctx, target, spec.user, spec.workload(ctx), S.warmupSec)));
      },
      measure: async (_workload, round) => {
        const run = job(ctx, target, spec.user, spec.workload(ctx), S.durationSec);
        const result = await measure(ctx, target, round + 1, run);
        spec.after(ctx, result.load);
        rounds.push(result);
        log(`${spec.name} ${round + 1}/${S.rounds} ${describe(result)}`);
        return result;
      },
    })),
    workloads: [spec.name],
    rounds: S.rounds,
    beforeRound: async () => {
      if (spec.deleteShare === 0) return;
      const budgets = ctx.targets.map((t) => deleteBudget(ctx, t.name, S.durationSec, spec.deleteShare));
      await ensurePool(
        ctx,
        spec.user,
        budgets.reduce((sum, n) => sum + n, 0),
      );
    },
  });
  return { name: spec.name, title: spec.title, description: spec.description, connections: S.connections, rounds };
}
