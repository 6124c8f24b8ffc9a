import { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { timeStatementsByTheLoop } from './statement-timeout';

type Callback = (error: unknown, answer?: unknown) => void;

/** A mysql2 connection stand-in: keeps each statement's options and callback, answered by the test. */
function connection() {
  const sent: { options: unknown; callback: Callback }[] = [];
  return {
    sent,
    query: jest.fn((options: unknown, _values: unknown, callback: Callback) => {
      sent.push({ options, callback });
    }),
  };
}

function dataSourceWith(open: ReturnType<typeof connection>[]) {
  const pool = Object.assign(new EventEmitter(), { _allConnections: { toArray: () => open } });
  return { pool, dataSource: { driver: { pool } } as unknown as DataSource };
}

describe(timeStatementsByTheLoop.name, () => {
  afterEach(() => jest.useRealTimers());

  it('times the statements of open connections and of those opened later, without mysql2 timing them too', () => {
    const open = connection();
    const { pool, dataSource } = dataSourceWith([open]);
    timeStatementsByTheLoop(dataSource);
    const later = connection();
    pool.emit('connection', later);
    for (const c of [open, later]) {
      (c as unknown as { query: (...args: unknown[]) => void }).query({ sql: 'SELECT 1', timeout: 500 }, [], () => {});
      expect(c.sent[0].options).toEqual({ sql: 'SELECT 1', timeout: undefined });
    }
  });

  it('leaves statements without a timeout as they are', () => {
    const open = connection();
    const original = open.query;
    timeStatementsByTheLoop(dataSourceWith([open]).dataSource);
    const callback = jest.fn();
    (open as unknown as { query: (...args: unknown[]) => void }).query('SET SESSION x = 1', callback);
    expect(original).toHaveBeenCalledWith('SET SESSION x = 1', callback);
  });

  it('fails a statement still unanswered after the deadline as mysql2 would, and drops its late answer', () => {
    jest.useFakeTimers();
    const open = connection();
    timeStatementsByTheLoop(dataSourceWith([open]).dataSource);
    const callback = jest.fn();
    (open as unknown as { query: (...args: unknown[]) => void }).query(
      { sql: 'SELECT SLEEP(9)', timeout: 500 },
      [],
      callback,
    );
    jest.advanceTimersByTime(500);
    expect(callback).not.toHaveBeenCalled();
    // The check runs once the loop has looked at its sockets: an immediate after the timer.
    jest.runOnlyPendingTimers();
    expect(callback).toHaveBeenCalledTimes(1);
    expect(callback.mock.calls[0][0]).toMatchObject({
      code: 'PROTOCOL_SEQUENCE_TIMEOUT',
      message: 'Query inactivity timeout',
    });
    open.sent[0].callback(null, [{ late: 1 }]);
    expect(callback).toHaveBeenCalledTimes(1);
  });

  it('answers a statement answered before the check, and never fails it afterwards', () => {
    jest.useFakeTimers();
    const open = connection();
    timeStatementsByTheLoop(dataSourceWith([open]).dataSource);
    const callback = jest.fn();
    (open as unknown as { query: (...args: unknown[]) => void }).query({ sql: 'SELECT 1', timeout: 500 }, [], callback);
    jest.advanceTimersByTime(500);
    open.sent[0].callback(null, [{ one: 1 }]);
    jest.runAllTimers();
    expect(callback).toHaveBeenCalledTimes(1);
    expect(callback).toHaveBeenCalledWith(null, [{ one: 1 }]);
  });

  it('does nothing where there is no pool (SQLite)', () => {
    expect(() => timeStatementsByTheLoop({ driver: {} } as unknown as DataSource)).not.toThrow();
  });
});
