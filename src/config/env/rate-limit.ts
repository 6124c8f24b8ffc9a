import { REDIS_URL_FORMS, RedisUrlError, parseRedisUrl } from '../redis-url';
import { SettingValues, integer, parsed } from '../settings';

/** What is wrong with a Redis URL, or undefined when nothing is. */
function redisUrlProblem(value: string): string | undefined {
  try {
    parseRedisUrl(value);
    return undefined;
  } catch (error) {
    if (error instanceof RedisUrlError) return error.message;
    throw error;
  }
}

/** How many requests a caller may send, and where they are counted. */
export const rateLimitSettings = {
  RATE_LIMIT_PER_MINUTE: integer({
    min: 1,
    max: 1_000_000_000,
    default: 600,
    description:
      'Requests per minute allowed per token user, or per client address for calls without a token the instance knows as valid.',
  }),
  REDIS_URL: parsed((value) => (redisUrlProblem(value) === undefined ? value : undefined), {
    example: 'redis://127.0.0.1:6379',
    note: 'or, through Redis Sentinel: redis+sentinel://:password@10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster/0',
    message: (value) => `$property must be a URL of the form ${REDIS_URL_FORMS}; ${redisUrlProblem(value)}`,
    description:
      "`redis://[:password@]host:6379[/db]` (`rediss://` for TLS), or through Redis Sentinel `redis+sentinel://[[user]:password@]host1:26379,host2:26379,host3:26379/mymaster[/db]` (the password is the Redis servers'; add `?sentinelPassword=...` when the sentinels require one; no TLS in this form): rate limits are counted in Redis, shared by all instances. Unset: each instance counts in memory. If Redis is unreachable, the service keeps serving with per-instance limits and logs it.",
  }),
};

export function rateLimitConfig(env: SettingValues<typeof rateLimitSettings>) {
  return { rateLimit: { perMinute: env.RATE_LIMIT_PER_MINUTE, redisUrl: env.REDIS_URL } };
}
