import { Migration } from 'typeorm';
import { MIGRATION_DEADLOCK_TRIES, runAgainAfterDeadlocks } from './migrations-runner';

const deadlock = () =>
  Object.assign(new Error('Deadlock found when trying to get lock'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });
const applied = [{ name: 'SubscriptionFeed1764900000000' }] as Migration[];

describe(runAgainAfterDeadlocks.name, () => {
  it('runs the pending migrations again from where a deadlock stopped them', async () => {
    const executePendingMigrations = jest.fn().mockRejectedValueOnce(deadlock()).mockResolvedValue(applied);
    await expect(runAgainAfterDeadlocks({ executePendingMigrations })).resolves.toBe(applied);
    expect(executePendingMigrations).toHaveBeenCalledTimes(2);
  });

  it(`gives up after ${MIGRATION_DEADLOCK_TRIES} deadlocks in a row`, async () => {
    const executePendingMigrations = jest.fn().mockRejectedValue(deadlock());
    await expect(runAgainAfterDeadlocks({ executePendingMigrations })).rejects.toThrow('Deadlock found');
    expect(executePendingMigrations).toHaveBeenCalledTimes(MIGRATION_DEADLOCK_TRIES);
  });

  it('never runs them again after any other failure', async () => {
    const failure = Object.assign(new Error("Duplicate column name 'feed_version'"), { code: 'ER_DUP_FIELDNAME' });
    const executePendingMigrations = jest.fn().mockRejectedValue(failure);
    await expect(runAgainAfterDeadlocks({ executePendingMigrations })).rejects.toBe(failure);
    expect(executePendingMigrations).toHaveBeenCalledTimes(1);
  });
});
