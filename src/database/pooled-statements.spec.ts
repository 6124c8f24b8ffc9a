import { DataSource, QueryFailedError } from 'typeorm';
import { PooledStatements } from './pooled-statements';

type Callback = (error: unknown, answer?: unknown) => void;

/** A mysql2 pool whose connections answer with `answers`, one per statement, in order. */
function pool(...answers: { error?: unknown; answer?: unknown }[]) {
  const connection = {
    query: jest.fn((_options: { sql: string; timeout?: number }, _values: unknown[], callback: Callback) => {
      const next = answers.shift() ?? {};
      setImmediate(() => callback(next.error ?? null, next.answer));
    }),
    release: jest.fn(),
    destroy: jest.fn(),
  };
  let refusal: unknown;
  return {
    connection,
    refuse: (error: unknown) => (refusal = error),
    getConnection: jest.fn((callback: Callback) => setImmediate(() => callback(refusal ?? null, connection))),
  };
}

function statements(
  fake: ReturnType<typeof pool>,
  options: object = { maxQueryExecutionTime: 500, enableQueryTimeout: true },
) {
  const logger = { logQuerySlow: jest.fn() };
  const dataSource = { driver: { pool: fake, options }, logger } as unknown as DataSource;
  return { run: PooledStatements.of(dataSource)!, logger };
}

const errorCoded = (code: string) => Object.assign(new Error(code), { code });

describe(PooledStatements.name, () => {
  it('is there only for a data source with a pool', () => {
    expect(PooledStatements.of({ driver: { options: {} } } as unknown as DataSource)).toBeUndefined();
  });

  it('sends a statement on a pooled connection with the statement timeout, and returns the connection', async () => {
    const fake = pool({ answer: [{ id: '1' }] }, { answer: { affectedRows: 2 } });
    const { run } = statements(fake);
    await expect(run.run('SELECT 1', ['a'], 'rows')).resolves.toEqual([{ id: '1' }]);
    await expect(run.run('DELETE', [], 'affected')).resolves.toBe(2);
    expect(fake.connection.query).toHaveBeenCalledWith({ sql: 'SELECT 1', timeout: 500 }, ['a'], expect.any(Function));
    expect(fake.connection.release).toHaveBeenCalledTimes(2);
    expect(fake.connection.destroy).not.toHaveBeenCalled();
  });

  it("gives an insert's rows and its generated key, exactly, from mysql2's header", async () => {
    const fake = pool(
      { answer: { affectedRows: 1, insertId: 7 } },
      { answer: { affectedRows: 1, insertId: '9007199254740993' } },
    );
    const { run } = statements(fake);
    await expect(run.run('INSERT', [], 'inserted')).resolves.toEqual({ affected: 1, id: 7n });
    await expect(run.run('INSERT', [], 'inserted')).resolves.toEqual({ affected: 1, id: 9007199254740993n });
  });

  it('sends no timeout when the data source has none', async () => {
    const fake = pool({ answer: [] });
    await statements(fake, {}).run.run('SELECT 1', [], 'rows');
    expect(fake.connection.query).toHaveBeenCalledWith(
      { sql: 'SELECT 1', timeout: undefined },
      [],
      expect.any(Function),
    );
  });

  it("fails a statement with TypeORM's QueryFailedError holding the driver's error", async () => {
    const duplicate = errorCoded('ER_DUP_ENTRY');
    const fake = pool({ error: duplicate });
    const error = await statements(fake)
      .run.run('INSERT', [1], 'affected')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryFailedError);
    expect((error as QueryFailedError).driverError).toBe(duplicate);
    expect(fake.connection.release).toHaveBeenCalledTimes(1);
  });

  it('destroys a connection whose statement timed out, rather than returning it to the pool', async () => {
    const fake = pool({ error: errorCoded('PROTOCOL_SEQUENCE_TIMEOUT') });
    await expect(statements(fake).run.run('SELECT SLEEP(1)', [], 'rows')).rejects.toBeInstanceOf(QueryFailedError);
    expect(fake.connection.destroy).toHaveBeenCalledTimes(1);
    expect(fake.connection.release).not.toHaveBeenCalled();
  });

  it("fails with the driver's own error when no connection could be had: the statement was never sent", async () => {
    const fake = pool();
    const refused = errorCoded('ECONNREFUSED');
    fake.refuse(refused);
    await expect(statements(fake).run.run('INSERT', [], 'affected')).rejects.toBe(refused);
    expect(fake.connection.query).not.toHaveBeenCalled();
  });

  it("logs a statement that took longer than the timeout through the data source's logger", async () => {
    const fake = pool({ answer: [] });
    const { run, logger } = statements(fake, { maxQueryExecutionTime: 1, enableQueryTimeout: true });
    const now = jest.spyOn(Date, 'now').mockReturnValueOnce(1000).mockReturnValueOnce(1005);
    await run.run('SELECT 1', [7], 'rows');
    now.mockRestore();
    expect(logger.logQuerySlow).toHaveBeenCalledWith(5, 'SELECT 1', [7]);
  });
});
