import { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { requestElapsedMs, startRequestClock } from './request-clock';

describe(startRequestClock.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it('records the start once: a second start keeps the first time', () => {
    const now = jest.spyOn(performance, 'now');
    const res = {} as ServerResponse;
    now.mockReturnValue(1000);
    startRequestClock(res);
    now.mockReturnValue(1500);
    startRequestClock(res);
    now.mockReturnValue(1750);
    expect(requestElapsedMs(res)).toBe(750);
  });

  it('reads 0 for a response whose clock was never started', () => {
    expect(requestElapsedMs({} as ServerResponse)).toBe(0);
  });
});
