import { QueryFailedError } from 'typeorm';
import { DatabaseUnreachableAtStartup } from './startup.errors';
import { STARTUP_RETRY_FIRST_DELAY_MS, describeStartupFailure, openAtStartup } from './startup-retry';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED', fatal: true });

describe(openAtStartup.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Runs the timers until `promise` settles, and gives what it settled with. */
  async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
    let result: { value?: T; error?: unknown } | undefined;
    promise.then(
      (value) => (result = { value }),
      (error: unknown) => (result = { error }),
    );
    while (!result) await jest.advanceTimersByTimeAsync(100);
    return result;
  }

  it('tries again while the database is unreachable, logging each failure with its reason as it happens', async () => {
    const warn = jest.fn();
    const open = jest.fn().mockRejectedValueOnce(refused()).mockRejectedValueOnce(refused()).mockResolvedValue('open');
    const opened = openAtStartup(open, 60_000, { warn });
    await jest.advanceTimersByTimeAsync(0);
    // The first failure is logged before the wait, not when the start ends.
    expect(open).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(
      /^Database unreachable at start-up \(attempt 1\): connect ECONNREFUSED 127\.0\.0\.1:3306; trying again in 500 ms/,
    );
    await expect(settle(opened)).resolves.toEqual({ value: 'open' });
    expect(open).toHaveBeenCalledTimes(3);
    expect(warn.mock.calls.map(([line]) => String(line).match(/attempt \d+|in \d+ ms/g))).toEqual([
      ['attempt 1', `in ${STARTUP_RETRY_FIRST_DELAY_MS} ms`],
      ['attempt 2', `in ${STARTUP_RETRY_FIRST_DELAY_MS * 2} ms`],
    ]);
  });

  it('gives up once the timeout has passed, saying for how long, how many attempts and why', async () => {
    const warn = jest.fn();
    const open = jest.fn().mockRejectedValue(refused());
    const started = Date.now();
    const { error } = await settle(openAtStartup(open, 10_000, { warn }));
    expect(error).toBeInstanceOf(DatabaseUnreachableAtStartup);
    expect((error as Error).message).toBe(
      `The database could not be reached within 10 s (${open.mock.calls.length} attempts); ` +
        'the last failed with connect ECONNREFUSED 127.0.0.1:3306',
    );
    // 0, 0.5, 1.5, 3.5, 7.5 and, cut short to the timeout, 10 s.
    expect(open).toHaveBeenCalledTimes(6);
    expect(Date.now() - started).toBe(10_000);
    expect(warn).toHaveBeenCalledTimes(5);
  });

  it('makes one attempt when the timeout is 0', async () => {
    const open = jest.fn().mockRejectedValue(refused());
    const { error } = await settle(openAtStartup(open, 0, { warn: jest.fn() }));
    expect((error as Error).message).toMatch(/within 0 s \(1 attempt\)/);
    expect(open).toHaveBeenCalledTimes(1);
  });

  it('throws at once what is not the database being unreachable, such as a failing migration', async () => {
    const warn = jest.fn();
    const failed = new QueryFailedError('ALTER TABLE plants ADD x INT', [], new Error('Duplicate column name'));
    const open = jest.fn().mockRejectedValue(failed);
    await expect(settle(openAtStartup(open, 60_000, { warn }))).resolves.toEqual({ error: failed });
    expect(open).toHaveBeenCalledTimes(1);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe(describeStartupFailure.name, () => {
  it.each([
    ['a refused connection', refused(), 'connect ECONNREFUSED 127.0.0.1:3306'],
    [
      'a refused login, with the code the message lacks',
      Object.assign(new Error("Access denied for user 'app'@'10.0.0.5' (using password: YES)"), {
        code: 'ER_ACCESS_DENIED_ERROR',
      }),
      "ER_ACCESS_DENIED_ERROR: Access denied for user 'app'@'10.0.0.5' (using password: YES)",
    ],
    [
      'a name with two addresses, both refused (an AggregateError without a message)',
      Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:3306')], ''), { code: 'ECONNREFUSED' }),
      'connect ECONNREFUSED ::1:3306',
    ],
    [
      "a driver error wrapped in TypeORM's",
      new QueryFailedError('SELECT 1', [], Object.assign(new Error('Unknown database'), { code: 'ER_BAD_DB_ERROR' })),
      'ER_BAD_DB_ERROR: Unknown database',
    ],
    ['a message over lines', new Error('first\n    second'), 'first second'],
  ])('describes %s', (_label, error, described) => {
    expect(describeStartupFailure(error)).toBe(described);
  });

  it('never quotes the password of a URL in the message', () => {
    const error = new Error('Cannot open mysql://app:hunter2@db:3306/plants?password=swordfish');
    expect(describeStartupFailure(error)).toBe('Cannot open mysql://***@db:3306/plants?password=***');
  });
});
