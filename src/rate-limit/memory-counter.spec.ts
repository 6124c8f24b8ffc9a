import { MemoryCounter } from './memory-counter';

describe(MemoryCounter.name, () => {
  const T0 = 1_000_000;
  let counter: MemoryCounter;

  beforeEach(() => (counter = new MemoryCounter()));
  afterEach(() => counter.close());

  it('counts hits in a fixed window and reports the seconds left', () => {
    expect(counter.increment('k', 60_000, 3, 60_000, T0)).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    expect(counter.increment('k', 60_000, 3, 60_000, T0 + 15_500)).toEqual({
      totalHits: 2,
      timeToExpire: 45,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('blocks past the limit for the block duration, then starts afresh', () => {
    for (let i = 0; i < 3; i++) expect(counter.increment('k', 60_000, 3, 60_000, T0).isBlocked).toBe(false);
    expect(counter.increment('k', 60_000, 3, 60_000, T0 + 1000)).toEqual({
      totalHits: 4,
      timeToExpire: 59,
      isBlocked: true,
      timeToBlockExpire: 60,
    });
    // Still blocked after the window itself is over, until the block ends.
    expect(counter.increment('k', 60_000, 3, 60_000, T0 + 60_500)).toMatchObject({
      isBlocked: true,
      timeToBlockExpire: 1,
    });
    expect(counter.increment('k', 60_000, 3, 60_000, T0 + 61_000)).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('keeps keys apart', () => {
    counter.increment('a', 60_000, 1, 60_000, T0);
    expect(counter.increment('a', 60_000, 1, 60_000, T0).isBlocked).toBe(true);
    expect(counter.increment('b', 60_000, 1, 60_000, T0).isBlocked).toBe(false);
  });

  it('takes constant memory per key however many hits it counts', () => {
    for (let i = 0; i < 100_000; i++) counter.increment('busy', 60_000, 1_000_000_000, 60_000, T0 + (i % 50_000));
    expect(counter.size).toBe(1);
    expect(counter.increment('busy', 60_000, 1_000_000_000, 60_000, T0 + 59_999).totalHits).toBe(100_001);
  });

  it('forgets windows that are over when it sweeps', () => {
    counter.increment('old', 60_000, 3, 60_000, T0);
    counter.increment('new', 60_000, 3, 60_000, T0 + 30_000);
    counter.sweep(T0 + 60_000);
    expect(counter.size).toBe(1);
    expect(counter.increment('old', 60_000, 3, 60_000, T0 + 60_000).totalHits).toBe(1);
  });
});
