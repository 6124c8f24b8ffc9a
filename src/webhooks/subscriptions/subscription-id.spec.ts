import { MAX_SUBSCRIPTION_ID, newSubscriptionId } from './subscription-id';

describe(newSubscriptionId.name, () => {
  it('gives ids from 1 to 2^53 - 1, which a double holds exactly, across the whole range', () => {
    expect(MAX_SUBSCRIPTION_ID).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    const ids = Array.from({ length: 2000 }, () => newSubscriptionId());
    for (const id of ids) {
      expect(id >= 1n && id <= MAX_SUBSCRIPTION_ID).toBe(true);
      // What JSON.parse makes of it is the same integer.
      expect(BigInt(JSON.parse(String(id)) as number)).toBe(id);
    }
    // 53 random bits: about half of them use the top bit, none is repeated.
    expect(ids.filter((id) => id >= 2n ** 52n).length).toBeGreaterThan(800);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
