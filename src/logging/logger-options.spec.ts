import { isoTimeField } from './logger-options';

describe(isoTimeField.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([
    Date.UTC(2026, 10, 24, 1, 2, 3, 456),
    Date.UTC(2026, 10, 24, 1, 2, 3, 7),
    Date.UTC(2026, 10, 24, 1, 2, 3, 45),
    Date.UTC(2026, 10, 24, 1, 2, 3, 0),
    Date.UTC(2026, 10, 24, 1, 2, 3, 999),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1, 0, 0, 0, 0),
  ])("writes the time of %d as pino's isoTime does", (now) => {
    jest.spyOn(Date, 'now').mockReturnValue(now);
    expect(isoTimeField()).toBe(`,"time":"${new Date(now).toISOString()}"`);
  });

  it('follows the clock from one millisecond and one second to the next', () => {
    const start = Date.UTC(2026, 10, 24, 1, 2, 3, 998);
    const now = jest.spyOn(Date, 'now');
    for (let t = start; t < start + 2500; t += 1) {
      now.mockReturnValue(t);
      expect(isoTimeField()).toBe(`,"time":"${new Date(t).toISOString()}"`);
    }
  });
});
