import { parseRateLimit } from './response';

describe('parseRateLimit', () => {
  it("reads the service's fields: remaining, reset, and the quota and window of the same policy", () => {
    expect(parseRateLimit('"default";r=0;t=42', '"default";q=600;w=60')).toEqual({
      remaining: 0,
      resetSeconds: 42,
      limit: 600,
      windowSeconds: 60,
    });
  });

  it('takes the first policy of several, its quota from the policy of that name', () => {
    expect(parseRateLimit('"burst";r=3;t=1, "day";r=900;t=3600', '"day";q=1000;w=86400, "burst";q=5;w=1')).toEqual({
      remaining: 3,
      resetSeconds: 1,
      limit: 5,
      windowSeconds: 1,
    });
  });

  it('gives remaining and reset alone without a policy field, or with another policy in it', () => {
    expect(parseRateLimit('"default";r=5;t=9', null)).toEqual({ remaining: 5, resetSeconds: 9 });
    expect(parseRateLimit('"default";r=5;t=9', '"other";q=1;w=1')).toEqual({ remaining: 5, resetSeconds: 9 });
  });

  it.each([null, '', '"default"', '"default";r=1', '"default";t=1', '"default";r=-1;t=1', '"default";r=x;t=1'])(
    'is undefined for %j',
    (field) => {
      expect(parseRateLimit(field, '"default";q=600;w=60')).toBeUndefined();
    },
  );
});
