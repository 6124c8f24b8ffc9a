import { backoffDelay, parseRetryAfter, sleep } from './retry';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-24T10:00:00Z');

  it.each([
    ['42', 42_000],
    ['0', 0],
    ['2026', 2_026_000],
    [' 7 ', 7_000],
    ['Tue, 24 Nov 2026 10:00:30 GMT', 30_000],
    ['Tue, 24 Nov 2026 09:59:00 GMT', 0],
  ])('reads %j as %d ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it.each([null, '', '-5', '1.5', 'soon', '2026-11-24'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles per attempt up to the cap, with half of each step random', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, 100, 1000, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, 100, 1000, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  });
});

describe('sleep', () => {
  it('rejects with the reason as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    await expect(sleep(1, controller.signal)).rejects.toThrow('stop');
  });
});
