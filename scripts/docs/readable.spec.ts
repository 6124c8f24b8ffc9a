import { aboutDuration, aboutHours, bytes, count, duration, listed, ordinal, shortDuration } from './readable';

describe('how the docs write values', () => {
  it.each([
    [16 * 1024, '16 KiB'],
    [4 * 1024 * 1024, '4 MiB'],
    [1000, '1000 bytes'],
  ])('bytes(%p) is %p', (n, text) => expect(bytes(n)).toBe(text));

  it.each([
    [5000, '5 seconds'],
    [1000, '1 second'],
    [600_000, '10 minutes'],
    [86_400_000, '24 hours'],
    [432_000_000, '5 days'],
    [1500, '1500 ms'],
  ])('duration(%p) is %p', (ms, text) => expect(duration(ms)).toBe(text));

  it.each([
    [5000, '5 s'],
    [300_000, '5 min'],
    [7_200_000, '2 h'],
    [250, '250 ms'],
  ])('shortDuration(%p) is %p', (ms, text) => expect(shortDuration(ms)).toBe(text));

  it.each([
    [1000, '1 s'],
    [305_000, '5 min'],
    [9_305_000, '2 h 35 min'],
    [7_200_000, '2 h'],
  ])('aboutDuration(%p) is %p', (ms, text) => expect(aboutDuration(ms)).toBe(text));

  it.each([
    [99_305_000, '27½ hours'],
    [7_200_000, '2 hours'],
    [1_860_000, '31 minutes'],
  ])('aboutHours(%p) is %p', (ms, text) => expect(aboutHours(ms)).toBe(text));

  it.each([
    [1, '1st'],
    [2, '2nd'],
    [3, '3rd'],
    [11, '11th'],
    [12, '12th'],
    [21, '21st'],
  ])('ordinal(%p) is %p', (n, text) => expect(ordinal(n)).toBe(text));

  it('lists and counts as prose does', () => {
    expect(listed(['a'])).toBe('a');
    expect(listed(['a', 'b', 'c'])).toBe('a, b and c');
    expect(count(10_000)).toBe('10,000');
  });
});
