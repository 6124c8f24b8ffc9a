import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { DataSource, QueryFailedError } from 'typeorm';
import { DatabaseUnavailable } from '../common/filters/server.errors';
import { Database, IsolationMismatch, NOW_MS, READ, READ_COMMITTED, WRITE, withNow } from './database';
import { isDatabaseUnavailable } from './database-errors';

const driverError = (code: string, errno?: number) => Object.assign(new Error(code), { code, errno });
/** A statement the server refused or lost: TypeORM wraps the driver's error. */
const failed = (code: string, errno?: number) => new QueryFailedError('SQL', [], driverError(code, errno));
const deadlock = () => failed('ER_LOCK_DEADLOCK', 1213);

function runner() {
  return { query: jest.fn(), release: jest.fn().mockResolvedValue(undefined) };
}

function setup(type: 'better-sqlite3' | 'mysql' = 'mysql') {
  const own = runner();
  const dataSource = {
    options: { type },
    // No pool: autocommit statements go through a query runner, as on SQLite (the pool's own path
    // is pooled-statements.spec.ts's).
    driver: { options: {} },
    isInitialized: true,
    createQueryRunner: jest.fn(() => own),
  };
  const inTransaction = runner();
  let active = false;
  const transactions = {
    isTransactionActive: () => active,
    get tx() {
      return { queryRunner: inTransaction };
    },
    withTransaction: jest.fn(async (...args: unknown[]) => {
      const work = args[args.length - 1] as () => Promise<unknown>;
      active = true;
      try {
        return await work();
      } finally {
        active = false;
      }
    }),
  };
  const database = new Database(dataSource as unknown as DataSource, transactions as unknown as TransactionHost<never>);
  return { database, dataSource, own, inTransaction, transactions };
}

describe(Database.name, () => {
  describe('statements on their own', () => {
    it('runs one on a runner of its own, released after, and gives rows or the rows changed', async () => {
      const { database, own } = setup();
      own.query.mockResolvedValueOnce({ records: [{ id: 1 }], affected: undefined });
      await expect(database.query('SELECT 1', [1], READ)).resolves.toEqual([{ id: 1 }]);
      expect(own.query).toHaveBeenCalledWith('SELECT 1', [1], true);
      own.query.mockResolvedValueOnce({ records: [], affected: 2 });
      await expect(database.execute('DELETE', [], WRITE)).resolves.toBe(2);
      own.query.mockResolvedValueOnce({ records: [], affected: undefined });
      await expect(database.execute('DELETE', [], WRITE)).resolves.toBe(0);
      expect(own.release).toHaveBeenCalledTimes(3);
    });

    it("gives an insert's rows and the key generated for it, as either driver reports it", async () => {
      const { database, own } = setup();
      // mysql2's header, and better-sqlite3's lastInsertRowid (a number, or a bigint with exact integers).
      own.query.mockResolvedValueOnce({ records: [], affected: 1, raw: { insertId: 41 } });
      await expect(database.insert('INSERT', [], WRITE)).resolves.toEqual({ affected: 1, id: 41n });
      own.query.mockResolvedValueOnce({ records: [], affected: 1, raw: 9007199254740993n });
      await expect(database.insert('INSERT', [])).resolves.toEqual({ affected: 1, id: 9007199254740993n });
      // Nothing inserted (an INSERT ... SELECT whose condition failed): no key, whatever the driver says.
      own.query.mockResolvedValueOnce({ records: [], affected: 0, raw: { insertId: 0 } });
      await expect(database.insert('INSERT', [])).resolves.toEqual({ affected: 0, id: undefined });
      own.query.mockResolvedValueOnce({ records: [], affected: 0, raw: 12 });
      await expect(database.insert('INSERT', [])).resolves.toEqual({ affected: 0, id: undefined });
    });

    it('sends each database its own text of a pair, the clock included', async () => {
      const pair = withNow((now) => `SELECT ${now}`);
      for (const [type, text] of [
        ['mysql', `SELECT ${NOW_MS.mysql}`],
        ['better-sqlite3', `SELECT ${NOW_MS.sqlite}`],
      ] as const) {
        const { database, own } = setup(type);
        own.query.mockResolvedValue({ records: [] });
        await database.query(pair, []);
        expect(own.query).toHaveBeenCalledWith(text, [], true);
        expect(database.sql(pair)).toBe(text);
        expect(database.dialect).toBe(type === 'mysql' ? 'mysql' : 'sqlite');
      }
    });

    it('runs a statement again after a deadlock or a node not ready, releasing the runner each time', async () => {
      const { database, own } = setup();
      own.query
        .mockRejectedValueOnce(deadlock())
        .mockRejectedValueOnce(failed('ER_UNKNOWN_COM_ERROR', 1047))
        .mockResolvedValueOnce({ records: [], affected: 1 });
      await expect(database.execute('INSERT', [], WRITE)).resolves.toBe(1);
      expect(own.query).toHaveBeenCalledTimes(3);
      expect(own.release).toHaveBeenCalledTimes(3);
    });

    it('runs a read again after a lost connection, a write only if it was never sent', async () => {
      const read = setup();
      read.own.query.mockRejectedValueOnce(failed('PROTOCOL_CONNECTION_LOST')).mockResolvedValueOnce({ records: [] });
      await expect(read.database.query('SELECT', [], READ)).resolves.toEqual([]);

      const sent = setup();
      sent.own.query.mockRejectedValue(failed('PROTOCOL_CONNECTION_LOST'));
      await expect(sent.database.execute('INSERT', [], WRITE)).rejects.toBeInstanceOf(DatabaseUnavailable);
      expect(sent.own.query).toHaveBeenCalledTimes(1);

      const unsent = setup();
      unsent.own.query.mockRejectedValueOnce(driverError('ECONNREFUSED')).mockResolvedValueOnce({ affected: 1 });
      await expect(unsent.database.execute('INSERT', [], WRITE)).resolves.toBe(1);
    });

    it('runs a statement once when no retry is asked for', async () => {
      const { database, own } = setup();
      own.query.mockRejectedValue(deadlock());
      await expect(database.query('SELECT', [])).rejects.toBeInstanceOf(DatabaseUnavailable);
      expect(own.query).toHaveBeenCalledTimes(1);
    });
  });

  describe('transactions', () => {
    it("runs every statement inside on the transaction's runner, never retried on its own", async () => {
      const { database, own, inTransaction } = setup();
      inTransaction.query.mockResolvedValueOnce({ affected: 1 }).mockRejectedValueOnce(deadlock());
      const work = database.transaction(async () => {
        await database.execute('INSERT', [], WRITE);
        await database.execute('UPDATE', [], WRITE);
      });
      // The statement's failure reaches the transaction as it came, and leaves it named.
      await expect(work).rejects.toMatchObject({ cause: expect.any(QueryFailedError) });
      expect(inTransaction.query).toHaveBeenCalledTimes(2);
      expect(inTransaction.release).not.toHaveBeenCalled();
      expect(own.query).not.toHaveBeenCalled();
    });

    it('runs the whole transaction again after a deadlock when asked to', async () => {
      const { database, inTransaction, transactions } = setup();
      inTransaction.query
        .mockResolvedValueOnce({ affected: 1 })
        .mockRejectedValueOnce(deadlock())
        .mockResolvedValue({ affected: 1 });
      const work = jest.fn(async () => {
        await database.execute('INSERT', [], WRITE);
        return database.execute('UPDATE', [], WRITE);
      });
      await expect(database.transaction(work, { retry: WRITE })).resolves.toBe(1);
      expect(work).toHaveBeenCalledTimes(2);
      expect(transactions.withTransaction).toHaveBeenCalledTimes(2);
    });

    it('makes a transaction opened inside another a savepoint of it, never run again on its own', async () => {
      const { database, transactions } = setup();
      const inner = jest.fn(async () => 'inner');
      await expect(database.transaction(() => database.transaction(inner, { retry: WRITE }))).resolves.toBe('inner');
      expect(transactions.withTransaction).toHaveBeenCalledTimes(2);
      expect(transactions.withTransaction).toHaveBeenLastCalledWith(Propagation.Nested, inner);
    });

    it('runs what was asked for after the commit once the outermost transaction committed, and for its last try only', async () => {
      const { database, inTransaction } = setup();
      const steps: string[] = [];
      inTransaction.query
        .mockResolvedValueOnce({ affected: 1 })
        .mockRejectedValueOnce(deadlock())
        .mockResolvedValue({ affected: 1 });
      let tries = 0;
      const work = async () => {
        const attempt = ++tries;
        await database.afterCommit(async () => void steps.push(`after try ${attempt}`));
        await database.execute('INSERT', [], WRITE);
        await database.execute('UPDATE', [], WRITE);
        steps.push(`end of try ${attempt}`);
        return attempt;
      };
      await expect(database.transaction(work, { retry: WRITE })).resolves.toBe(2);
      expect(steps).toEqual(['end of try 2', 'after try 2']);
    });

    it('runs what is asked for after the commit at once outside a transaction', async () => {
      const { database } = setup();
      const then = jest.fn(async () => undefined);
      await database.afterCommit(then);
      expect(then).toHaveBeenCalledTimes(1);
    });

    it('never runs the transaction again for a failure after its commit', async () => {
      const { database, transactions } = setup();
      const work = () => database.afterCommit(() => Promise.reject(deadlock()));
      await expect(database.transaction(work, { retry: WRITE })).rejects.toThrow('ER_LOCK_DEADLOCK');
      expect(transactions.withTransaction).toHaveBeenCalledTimes(1);
    });

    it('lets an inner transaction ask for the isolation of the outer one, and fails one that asks for another', async () => {
      const { database } = setup();
      const inner = (isolation?: typeof READ_COMMITTED) => database.transaction(async () => 'inner', { isolation });
      await expect(database.transaction(() => inner(READ_COMMITTED), { isolation: READ_COMMITTED })).resolves.toBe(
        'inner',
      );
      await expect(database.transaction(() => inner())).resolves.toBe('inner');
      // Without a level of its own, the outer one runs at the database's default (REPEATABLE READ).
      await expect(database.transaction(() => inner(READ_COMMITTED))).rejects.toBeInstanceOf(IsolationMismatch);
    });

    it("asks for each database's isolation level", async () => {
      const { database, transactions } = setup('better-sqlite3');
      await database.transaction(async () => undefined, {
        isolation: { mysql: 'READ COMMITTED', sqlite: 'SERIALIZABLE' },
      });
      expect(transactions.withTransaction).toHaveBeenCalledWith(
        { isolationLevel: 'SERIALIZABLE' },
        expect.any(Function),
      );
    });
  });

  describe('a database that cannot serve', () => {
    it('names the failure of a statement once its retries are spent, keeping the driver error as its cause', async () => {
      const { database, own } = setup();
      const refused = driverError('ECONNREFUSED');
      own.query.mockRejectedValue(refused);
      const error = await database.query('SELECT', [], { readOnly: true, baseDelayMs: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailable);
      expect((error as Error).cause).toBe(refused);
      expect(own.query).toHaveBeenCalledTimes(4);
    });

    it('names the failure of a transaction only once the whole transaction failed, after its retries', async () => {
      const { database, inTransaction } = setup();
      inTransaction.query.mockRejectedValue(deadlock());
      const work = jest.fn(() => database.execute('UPDATE', [], WRITE));
      const error = await database
        .transaction(work, { retry: { readOnly: false, baseDelayMs: 1 } })
        .catch((e: unknown) => e);
      expect(work).toHaveBeenCalledTimes(4);
      expect(error).toBeInstanceOf(DatabaseUnavailable);
      expect(isDatabaseUnavailable((error as Error).cause)).toBe(true);
    });
  });

  describe('once the data source is closed', () => {
    it('reports any failure of a statement or a transaction as the database unavailable', async () => {
      const { database, dataSource, own, transactions } = setup();
      dataSource.isInitialized = false;
      own.query.mockRejectedValue(new TypeError("Cannot read properties of undefined (reading 'prepare')"));
      transactions.withTransaction.mockRejectedValue(new TypeError('closed'));
      for (const call of [
        () => database.query('SELECT', [], READ),
        () => database.execute('DELETE', [], WRITE),
        () => database.transaction(async () => undefined),
      ]) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(DatabaseUnavailable);
        expect((error as DatabaseUnavailable).getStatus()).toBe(503);
      }
    });

    it('passes errors on unchanged while the data source is open', async () => {
      const { database, own } = setup();
      const error = failed('ER_PARSE_ERROR');
      own.query.mockRejectedValue(error);
      await expect(database.query('SELEC', [])).rejects.toBe(error);
    });
  });
});
