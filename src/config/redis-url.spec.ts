import Redis from 'ioredis';
import { RedisUrlError, parseRedisUrl } from './redis-url';

function problem(value: string): string {
  try {
    parseRedisUrl(value);
  } catch (error) {
    if (error instanceof RedisUrlError) return error.message;
    throw error;
  }
  throw new Error(`parseRedisUrl accepted ${JSON.stringify(value)}`);
}

describe(parseRedisUrl.name, () => {
  it.each(['redis://127.0.0.1:6379', 'redis://:pw@cache:6379/2', 'rediss://user:pw@cache.example.com:6380/0'])(
    'hands %p to ioredis as it is',
    (url) => {
      expect(parseRedisUrl(url)).toEqual({ kind: 'server', url });
    },
  );

  it.each([
    ['redis://:pw@cache:notaport', 'it is not a URL'],
    ['redis://cache:70000', 'it is not a URL'],
    ['redis://:p%zz@cache:6379', 'its password is not valid percent-encoding'],
    ['redis://us%zzer:pw@cache:6379', 'its user name is not valid percent-encoding'],
    ['redis://cache:6379/plants', 'its database "plants" is not a number'],
  ])('refuses %p, which ioredis would fail on or misread: %s', (url, why) => {
    expect(problem(url)).toContain(why);
    expect(problem(url)).not.toContain('pw');
  });

  it.each(['redis://:pw@cache:notaport', 'redis://cache:70000', 'redis://:p%zz@cache:6379'])(
    'refuses %p, which ioredis itself throws on',
    (url) => {
      expect(() => new Redis(url, { lazyConnect: true })).toThrow();
      expect(() => parseRedisUrl(url)).toThrow(RedisUrlError);
    },
  );

  it.each([
    'redis://127.0.0.1:6379',
    'redis://:p%40ss@cache:6379/2',
    'rediss://cache.example.com',
    'redis://[::1]:6379/',
  ])('takes %p, as ioredis does', (url) => {
    expect(parseRedisUrl(url)).toEqual({ kind: 'server', url });
    new Redis(url, { lazyConnect: true }).disconnect();
  });

  it('reads the sentinels, the group name and the database', () => {
    expect(parseRedisUrl('redis+sentinel://10.0.0.1:26379,10.0.0.2:26380,sentinel-3:26381/mymaster/2')).toEqual({
      kind: 'sentinel',
      group: {
        name: 'mymaster',
        db: 2,
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: '10.0.0.2', port: 26380 },
          { host: 'sentinel-3', port: 26381 },
        ],
      },
    });
  });

  it('defaults the sentinel port to 26379 and the database to 0', () => {
    expect(parseRedisUrl('redis+sentinel://a,b:26400/mymaster')).toEqual({
      kind: 'sentinel',
      group: {
        name: 'mymaster',
        db: 0,
        sentinels: [
          { host: 'a', port: 26379 },
          { host: 'b', port: 26400 },
        ],
      },
    });
    expect(parseRedisUrl('redis+sentinel://a/mymaster/').kind).toBe('sentinel');
  });

  it('reads IPv6 sentinel addresses', () => {
    const target = parseRedisUrl('redis+sentinel://[::1]:26379,[fe80::2]/mymaster');
    expect(target.kind === 'sentinel' && target.group.sentinels).toEqual([
      { host: '::1', port: 26379 },
      { host: 'fe80::2', port: 26379 },
    ]);
  });

  it('gives the user information to Redis and the sentinelPassword parameter to the sentinels', () => {
    expect(parseRedisUrl('redis+sentinel://:s3cr%40t@h1:26379,h2:26379/mymaster/1?sentinelPassword=sent%26pw')).toEqual(
      {
        kind: 'sentinel',
        group: {
          name: 'mymaster',
          db: 1,
          sentinels: [
            { host: 'h1', port: 26379 },
            { host: 'h2', port: 26379 },
          ],
          password: 's3cr@t',
          sentinelPassword: 'sent&pw',
        },
      },
    );
    expect(
      parseRedisUrl('redis+sentinel://app:pw@h1/mymaster?sentinelUsername=watch&sentinelPassword=x'),
    ).toMatchObject({
      group: { username: 'app', password: 'pw', sentinelUsername: 'watch', sentinelPassword: 'x' },
    });
  });

  it.each([
    ['http://cache:6379', /scheme/],
    ['redis+sentinel://h1:26379,h2:26379', /does not read as/],
    ['redis+sentinel://h1:26379/', /does not read as/],
    ['redis+sentinel://h1:26379,,h2/mymaster', /sentinel address ""/],
    ['redis+sentinel://h1:99999/mymaster', /sentinel port 99999 is out of range/],
    ['redis+sentinel://h1:0/mymaster', /sentinel port 0 is out of range/],
    ['redis+sentinel://h1:port/mymaster', /sentinel address "h1:port"/],
    ['redis+sentinel://h1/mymaster/zero', /database "zero" is not a number/],
    [
      'redis+sentinel://h1/mymaster?password=x',
      /parameter "password" is not one of sentinelUsername, sentinelPassword/,
    ],
    ['redis+sentinel://:%E0%A4%A@h1/mymaster', /password is not valid percent-encoding/],
    ['redis+sentinel://h 1/mymaster', /does not read as/],
  ])('refuses %p, saying why', (url, why) => {
    expect(problem(url)).toMatch(why);
  });

  it('never repeats a password in its reasons', () => {
    expect(problem('redis+sentinel://:hunter2@h1:70000/mymaster')).not.toContain('hunter2');
    expect(problem('redis+sentinel://:hunter2@h1/mymaster/x')).not.toContain('hunter2');
  });
});
