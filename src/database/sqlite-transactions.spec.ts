import { DataSource } from 'typeorm';
import { serializeSqliteTransactions } from './sqlite-transactions';

describe('serializeSqliteTransactions', () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    await dataSource.query('CREATE TABLE rows (name TEXT PRIMARY KEY)');
  });
  afterEach(() => dataSource.destroy());

  const names = async () =>
    ((await dataSource.query('SELECT name FROM rows ORDER BY name')) as { name: string }[]).map((row) => row.name);
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  /** A transaction that writes, lets other callers run, and then fails: its write must go, theirs stay. */
  const failingTransaction = () =>
    dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO rows (name) VALUES ('in the failed transaction')");
      await tick();
      await tick();
      throw new Error('rolled back');
    });

  it('keeps a statement sent during a transaction out of it: a rollback does not take it along', async () => {
    serializeSqliteTransactions(dataSource);
    const failed = failingTransaction();
    await tick();
    const alone = dataSource.query("INSERT INTO rows (name) VALUES ('sent alone')");
    await expect(failed).rejects.toThrow('rolled back');
    await alone;
    await expect(names()).resolves.toEqual(['sent alone']);
  });

  it('runs transactions one after the other, never one inside another', async () => {
    serializeSqliteTransactions(dataSource);
    const failed = failingTransaction();
    const committed = dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO rows (name) VALUES ('committed')");
    });
    await expect(failed).rejects.toThrow('rolled back');
    await expect(committed).resolves.toBeUndefined();
    await expect(names()).resolves.toEqual(['committed']);
  });

  it('is what goes wrong without it (the shared runner takes the statement into the transaction)', async () => {
    const failed = failingTransaction();
    await tick();
    const alone = dataSource.query("INSERT INTO rows (name) VALUES ('sent alone')");
    await expect(failed).rejects.toThrow('rolled back');
    await alone;
    await expect(names()).resolves.toEqual([]);
  });

  it('changes nothing on MySQL, where each transaction has a connection of its own', () => {
    const mysql = { options: { type: 'mysql' }, transaction: jest.fn() } as unknown as DataSource;
    const before = mysql.transaction;
    serializeSqliteTransactions(mysql);
    expect(mysql.transaction).toBe(before);
  });
});
