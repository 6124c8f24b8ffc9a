import { Migration } from 'typeorm';
import { MIGRATION_DEADLOCK_TRIES, runAgainAfterDeadlocks } from './migrations-runner';

const deadlock = () =>
  Object.assign(new Error('Deadlock found when trying to get lock'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });
const migrations = (...names: string[]) => names.map((name) => ({ name })) as Migration[];

/**
 * An executor whose tries of the pending migrations end as `outcomes` say, in turn: a number of
 * them committed and then a failure, or all of them.
 */
function executor(all: Migration[], ...outcomes: ({ committed: number; failure: Error } | 'all')[]) {
  const pending = [...all];
  const executePendingMigrations = jest.fn(async () => {
    const outcome = outcomes.shift()!;
    if (outcome === 'all') return pending.splice(0);
    pending.splice(0, outcome.committed);
    throw outcome.failure;
  });
  const getPendingMigrations = jest.fn(async () => [...pending]);
  return { executePendingMigrations, getPendingMigrations };
}

describe(runAgainAfterDeadlocks.name, () => {
  const all = migrations('SubscriptionFeed1764900000000', 'PlantsByName1799000000000', 'PlantsNote1799000000001');

  it('runs the pending migrations again from where a deadlock stopped them, and gives every one applied', async () => {
    const run = executor(all, { committed: 1, failure: deadlock() }, { committed: 0, failure: deadlock() }, 'all');
    await expect(runAgainAfterDeadlocks(run)).resolves.toEqual(all);
    expect(run.executePendingMigrations).toHaveBeenCalledTimes(3);
  });

  it(`gives up after ${MIGRATION_DEADLOCK_TRIES} deadlocks in a row`, async () => {
    const tries = Array.from({ length: MIGRATION_DEADLOCK_TRIES + 1 }, () => ({ committed: 0, failure: deadlock() }));
    const run = executor(all, ...tries);
    await expect(runAgainAfterDeadlocks(run)).rejects.toThrow('Deadlock found');
    expect(run.executePendingMigrations).toHaveBeenCalledTimes(MIGRATION_DEADLOCK_TRIES);
  });

  it('never runs them again after any other failure', async () => {
    const failure = Object.assign(new Error("Duplicate column name 'feed_version'"), { code: 'ER_DUP_FIELDNAME' });
    const run = executor(all, { committed: 0, failure }, 'all');
    await expect(runAgainAfterDeadlocks(run)).rejects.toBe(failure);
    expect(run.executePendingMigrations).toHaveBeenCalledTimes(1);
  });
});
