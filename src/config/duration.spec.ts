import { parseDuration } from './duration';

describe(parseDuration.name, () => {
  it.each([
    ['250ms', 250],
    ['5s', 5000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['5d', 432_000_000],
    ['0s', 0],
  ])('reads %p as %p ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '5', 's', '5w', '1.5h', '-1d', '+1d', '5 s', '5S', ' 5s', '5s ', '05s', '1234567890s'])(
    'refuses %p as written on a command line',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );

  it('reads surrounding spaces and leading zeros as a hand-edited setting may have them', () => {
    expect(parseDuration(' 05s ', { lenient: true })).toBe(5000);
    expect(parseDuration('5 s', { lenient: true })).toBeUndefined();
  });

  it('accepts only the units it is given', () => {
    expect(parseDuration('90m', { units: ['m', 'h', 'd'] })).toBe(5_400_000);
    expect(parseDuration('90s', { units: ['m', 'h', 'd'] })).toBeUndefined();
  });

  it('keeps to its bounds, both included', () => {
    const rules = { min: 1000, max: 60_000 };
    expect(parseDuration('1s', rules)).toBe(1000);
    expect(parseDuration('1m', rules)).toBe(60_000);
    expect(parseDuration('999ms', rules)).toBeUndefined();
    expect(parseDuration('61s', rules)).toBeUndefined();
  });
});
