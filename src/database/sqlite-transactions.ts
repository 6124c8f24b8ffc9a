import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource } from 'typeorm';

/**
 * On SQLite, TypeORM hands every caller the one query runner of the database, and a transaction is
 * BEGIN ... COMMIT on that runner: a statement another request sends meanwhile runs inside the
 * transaction and is rolled back with it (a create answered 200, then undone), and a second
 * transaction becomes a savepoint of the first. Here a transaction has the runner to itself:
 * statements of other callers, and other transactions, wait until it has ended. MySQL pools
 * connections and gives each transaction its own, so nothing changes there.
 */
export function serializeSqliteTransactions(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  const insideTransaction = new AsyncLocalStorage<true>();
  let queue: Promise<unknown> = Promise.resolve();
  let running: Promise<unknown> | undefined;

  const runner = dataSource.driver.createQueryRunner('master');
  const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
  (runner as { query: unknown }).query = async (...args: unknown[]) => {
    while (running !== undefined && !insideTransaction.getStore()) await running.catch(() => undefined);
    return query(...args);
  };

  const transaction = dataSource.transaction.bind(dataSource) as (...args: unknown[]) => Promise<unknown>;
  (dataSource as { transaction: unknown }).transaction = (...args: unknown[]) => {
    // A transaction opened inside one is TypeORM's savepoint, as before.
    if (insideTransaction.getStore()) return transaction(...args);
    const turn = queue
      .catch(() => undefined)
      .then(() => {
        const work = insideTransaction.run(true, () => transaction(...args));
        running = work;
        return work.finally(() => {
          if (running === work) running = undefined;
        });
      });
    queue = turn;
    return turn;
  };
}
