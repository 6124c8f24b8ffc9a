import { RETRY_JITTER } from '../../src/config/env/webhooks';
import { retryScheduleFacts } from './retry-schedule';

const HOUR = 3_600_000;

describe(retryScheduleFacts.name, () => {
  const facts = retryScheduleFacts([HOUR, HOUR, HOUR / 2], '1h,1h,30m');

  it('counts the first attempt and one per step, over the sum of the steps', () => {
    expect(facts['retry-schedule'].text).toBe('`1h,1h,30m`');
    expect(facts['retry-attempts'].text).toBe('4 attempts');
    expect(facts['retry-span'].text).toBe('2½ hours');
  });

  it("stretches the span by the dispatcher's jitter either way", () => {
    expect(RETRY_JITTER).toBeGreaterThan(0);
    const [low, high] = [2.5 * (1 - RETRY_JITTER), 2.5 * (1 + RETRY_JITTER)].map(Math.round);
    expect(facts['retry-span-jittered'].text).toBe(`${low} and ${high} hours`);
    expect(facts['retry-jitter'].text).toBe(`${RETRY_JITTER * 100}%`);
  });

  it('tables each attempt with its wait and the time since the change', () => {
    expect(facts['retry-table'].block).toBe(true);
    expect(facts['retry-table'].text.split('\n').slice(2)).toEqual([
      '| 1       | up to about `WEBHOOK_POLL_INTERVAL_MS` | about 1 s        |',
      '| 2       | 1 h                                    | 1 h              |',
      '| 3       | 1 h                                    | 2 h              |',
      '| 4       | 30 min                                 | 2 h 30 min       |',
    ]);
  });

  it('writes a short schedule in minutes', () => {
    const short = retryScheduleFacts([1000, 60_000, 30 * 60_000], '1s,1m,30m');
    expect(short['retry-span'].text).toBe('31 minutes');
    expect(short['retry-table'].text).toContain(
      '| 3       | 1 min                                  | 1 min            |',
    );
  });
});
