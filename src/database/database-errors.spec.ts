import { CannotExecuteNotConnectedError, QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable, isUniqueViolation } from './database-errors';

function driverError(fields: Record<string, unknown>): Error {
  return Object.assign(new Error('driver says no'), fields);
}

describe('database-errors', () => {
  describe(isUniqueViolation.name, () => {
    it.each(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])(
      'recognises the raw driver code %s',
      (code) => {
        expect(isUniqueViolation(driverError({ code }))).toBe(true);
      },
    );

    it('recognises a driver error wrapped in a QueryFailedError', () => {
      const wrapped = new QueryFailedError(
        'INSERT INTO plants ...',
        [],
        driverError({ code: 'ER_DUP_ENTRY', errno: 1062 }),
      );
      expect(isUniqueViolation(wrapped)).toBe(true);
      expect(isUniqueViolation({ driverError: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' } })).toBe(true);
    });

    it.each([
      driverError({ code: 'SQLITE_CONSTRAINT_NOTNULL' }),
      driverError({ code: 'SQLITE_CONSTRAINT' }),
      driverError({ code: 'ER_NO_SUCH_TABLE' }),
      driverError({ code: 'ECONNREFUSED' }),
      new Error('ER_DUP_ENTRY'),
      'ER_DUP_ENTRY',
      { driverError: { code: 'ER_PARSE_ERROR' } },
      {},
      null,
      undefined,
      1062,
    ])('does not take %p for a unique violation', (error) => {
      expect(isUniqueViolation(error)).toBe(false);
    });
  });

  describe(isDatabaseUnavailable.name, () => {
    it.each([
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'EAI_AGAIN',
      'PROTOCOL_CONNECTION_LOST',
      'PROTOCOL_SEQUENCE_TIMEOUT',
      'ER_CON_COUNT_ERROR',
      'ER_LOCK_WAIT_TIMEOUT',
      'ER_LOCK_DEADLOCK',
      'ER_UNKNOWN_COM_ERROR',
      'ER_ERROR_DURING_COMMIT',
      'SQLITE_BUSY',
      'SQLITE_LOCKED',
      'SQLITE_FULL',
      'SQLITE_CANTOPEN',
    ])('recognises the raw code %s', (code) => {
      expect(isDatabaseUnavailable(driverError({ code }))).toBe(true);
    });

    it.each(['SQLITE_IOERR_WRITE', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_CANTOPEN_NOTEMPDIR', 'SQLITE_LOCKED_SHAREDCACHE'])(
      'reads the SQLite extended code %s by its primary code',
      (code) => {
        expect(isDatabaseUnavailable(driverError({ code }))).toBe(true);
      },
    );

    it('recognises a driver error wrapped in a QueryFailedError', () => {
      const wrapped = new QueryFailedError('SELECT 1', [], driverError({ code: 'PROTOCOL_CONNECTION_LOST' }));
      expect(isDatabaseUnavailable(wrapped)).toBe(true);
      expect(isDatabaseUnavailable({ driverError: { code: 'PROTOCOL_CONNECTION_LOST' } })).toBe(true);
    });

    it('recognises TypeORM errors raised when there is no connection', () => {
      expect(isDatabaseUnavailable(new CannotExecuteNotConnectedError())).toBe(true);
      expect(isDatabaseUnavailable({ name: 'ConnectionIsNotSetError' })).toBe(true);
      expect(isDatabaseUnavailable({ name: 'ConnectionNotFoundError' })).toBe(true);
    });

    it('recognises a missing schema: a table or the whole database gone, as MySQL and SQLite report it', () => {
      expect(isDatabaseUnavailable(driverError({ code: 'ER_NO_SUCH_TABLE', errno: 1146 }))).toBe(true);
      expect(isDatabaseUnavailable(driverError({ code: 'ER_BAD_DB_ERROR', errno: 1049 }))).toBe(true);
      const sqlite = Object.assign(new Error('no such table: plants'), { code: 'SQLITE_ERROR' });
      expect(isDatabaseUnavailable(new QueryFailedError('SELECT 1 FROM plants', [], sqlite))).toBe(true);
    });

    it('recognises errors mysql2 marks as fatal to the connection', () => {
      expect(isDatabaseUnavailable(driverError({ code: 'ER_SOMETHING_NEW', fatal: true }))).toBe(true);
      expect(isDatabaseUnavailable({ driverError: { fatal: true } })).toBe(true);
    });

    it.each([
      driverError({ code: 'ER_DUP_ENTRY' }),
      driverError({ code: 'SQLITE_CONSTRAINT_UNIQUE' }),
      driverError({ code: 'SQLITE_ERROR' }),
      Object.assign(new Error('near "SELEC": syntax error'), { code: 'SQLITE_ERROR' }),
      Object.assign(new Error('no such table: plants'), { code: 'SQLITE_CONSTRAINT' }),
      driverError({ code: 'ER_PARSE_ERROR', fatal: false }),
      driverError({ fatal: 'true' }),
      new QueryFailedError('SELECT 1', [], driverError({ code: 'ER_BAD_FIELD_ERROR' })),
      new Error('ECONNREFUSED'),
      'ECONNREFUSED',
      {},
      null,
      undefined,
    ])('does not take %p for an outage', (error) => {
      expect(isDatabaseUnavailable(error)).toBe(false);
    });
  });
});
