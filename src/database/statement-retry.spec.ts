import { QueryFailedError } from 'typeorm';
import { STATEMENT_RETRIES, isRetryable, retryReason, withStatementRetry } from './statement-retry';

const driverError = (code: string, errno: number) => Object.assign(new Error(code), { code, errno });
const failed = (code: string, errno: number) => new QueryFailedError('INSERT', [], driverError(code, errno));
const deadlock = () => failed('ER_LOCK_DEADLOCK', 1213);
const notReady = () => failed('ER_UNKNOWN_COM_ERROR', 1047);

describe('isRetryable', () => {
  it('retries a deadlock or lost certification, and a Galera node not ready, for any statement', () => {
    for (const readOnly of [true, false]) {
      expect(isRetryable(deadlock(), readOnly)).toBe(true);
      expect(isRetryable(notReady(), readOnly)).toBe(true);
    }
  });

  it('retries a write after a lost connection only when the statement was never sent', () => {
    const lost = failed('PROTOCOL_CONNECTION_LOST', 0);
    expect(isRetryable(lost, true)).toBe(true);
    expect(isRetryable(lost, false)).toBe(false);
    // Getting a connection failed: TypeORM passes the driver error on unwrapped.
    expect(isRetryable(driverError('PROTOCOL_CONNECTION_LOST', 0), false)).toBe(true);
    expect(isRetryable(driverError('ECONNREFUSED', 0), false)).toBe(true);
  });

  it('never retries a duplicate, a timeout or an unknown error', () => {
    expect(isRetryable(failed('ER_DUP_ENTRY', 1062), false)).toBe(false);
    expect(isRetryable(failed('PROTOCOL_SEQUENCE_TIMEOUT', 0), true)).toBe(false);
    expect(isRetryable(failed('ER_LOCK_WAIT_TIMEOUT', 1205), true)).toBe(false);
    expect(isRetryable(new TypeError('bug'), true)).toBe(false);
  });

  it('never retries a failed commit: a Galera node leaving the primary component cannot say whether the others applied it', () => {
    expect(isRetryable(failed('ER_ERROR_DURING_COMMIT', 1180), false)).toBe(false);
  });
});

describe('retryReason', () => {
  it('names why a statement may run again', () => {
    expect(retryReason(deadlock(), false)).toBe('deadlock');
    expect(retryReason(notReady(), false)).toBe('node_not_ready');
    expect(retryReason(driverError('ECONNREFUSED', 0), false)).toBe('connection');
    expect(retryReason(failed('PROTOCOL_CONNECTION_LOST', 0), true)).toBe('connection');
    expect(retryReason(failed('PROTOCOL_CONNECTION_LOST', 0), false)).toBeUndefined();
    expect(retryReason(failed('ER_DUP_ENTRY', 1062), true)).toBeUndefined();
  });
});

describe('withStatementRetry', () => {
  it('publishes each retry with its reason, and nothing for the attempt that gives up', async () => {
    const published: unknown[] = [];
    const listener = (message: unknown) => published.push(message);
    STATEMENT_RETRIES.subscribe(listener);
    try {
      const run = jest.fn().mockRejectedValueOnce(notReady()).mockRejectedValue(deadlock());
      await expect(withStatementRetry(run, { readOnly: false, attempts: 3, baseDelayMs: 1 })).rejects.toThrow();
    } finally {
      STATEMENT_RETRIES.unsubscribe(listener);
    }
    expect(published).toEqual([{ reason: 'node_not_ready' }, { reason: 'deadlock' }]);
  });

  it('runs again after a deadlock and returns the first success', async () => {
    const run = jest.fn().mockRejectedValueOnce(deadlock()).mockRejectedValueOnce(deadlock()).mockResolvedValue('done');
    await expect(withStatementRetry(run, { readOnly: false, baseDelayMs: 1 })).resolves.toBe('done');
    expect(run).toHaveBeenCalledTimes(3);
  });

  it('gives up after the bounded number of attempts with the last error', async () => {
    const error = deadlock();
    const run = jest.fn().mockRejectedValue(error);
    await expect(withStatementRetry(run, { readOnly: false, attempts: 3, baseDelayMs: 1 })).rejects.toBe(error);
    expect(run).toHaveBeenCalledTimes(3);
  });

  it('does not start another attempt once the window has passed: a failure that took a wait is not waited for again', async () => {
    const error = failed('PROTOCOL_CONNECTION_LOST', 0);
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const run = jest.fn(() => {
      now += 2000; // HAProxy gave up on a dead node after its retries
      return Promise.reject(error);
    });
    try {
      await expect(withStatementRetry(run, { readOnly: true, windowMs: 1000 })).rejects.toBe(error);
    } finally {
      jest.restoreAllMocks();
    }
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('passes a non-retryable error on at once', async () => {
    const error = failed('ER_DUP_ENTRY', 1062);
    const run = jest.fn().mockRejectedValue(error);
    await expect(withStatementRetry(run, { readOnly: false })).rejects.toBe(error);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('waits a jittered, growing, capped backoff between attempts', async () => {
    const delays: number[] = [];
    const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      delays.push(ms);
      fn();
      return 0 as unknown as NodeJS.Timeout;
    }) as typeof setTimeout);
    jest.spyOn(Math, 'random').mockReturnValue(0.999);
    try {
      await expect(
        withStatementRetry(() => Promise.reject(deadlock()), {
          readOnly: true,
          attempts: 5,
          baseDelayMs: 10,
          maxDelayMs: 50,
        }),
      ).rejects.toThrow();
    } finally {
      spy.mockRestore();
      jest.restoreAllMocks();
    }
    expect(delays.map(Math.round)).toEqual([10, 20, 40, 50]);
  });
});
