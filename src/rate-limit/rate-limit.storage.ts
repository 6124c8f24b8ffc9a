import { FactoryProvider, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import Redis, { RedisOptions } from 'ioredis';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppConfig } from '../config/configuration';
import { parseRedisUrl } from '../config/redis-url';
import {
  RATE_LIMIT_WINDOW_MS,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_RECONNECT_MAX_MS,
  REDIS_RECONNECT_STEP_MS,
} from './rate-limit.limits';

const STARTUP_WAIT_MS = 1000;

/** Where the counts live in Redis: `plantstore:rate:<policy>:user:<subject>` or `...:ip:<address>`. */
export const RATE_LIMIT_KEY_PREFIX = 'plantstore:rate';

/** A primary that was demoted to a replica answers writes with READONLY. */
const READONLY = /^READONLY\b/;

/** Fail fast instead of queueing: a request must never wait for Redis to come back. */
const CLIENT_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: 2000,
  retryStrategy: (attempt) => Math.min(attempt * REDIS_RECONNECT_STEP_MS, REDIS_RECONNECT_MAX_MS),
  // Leave a demoted primary at once: through Sentinel the reconnection finds the new one.
  reconnectOnError: (error) => READONLY.test(error.message),
};

/**
 * The client for REDIS_URL (validated at start-up): one server, or a Sentinel group, where ioredis
 * asks the sentinels for the current primary on every (re)connection and refuses a replica.
 */
export function createRedisClient(url: string): Redis {
  const target = parseRedisUrl(url);
  if (target.kind === 'server') return new Redis(url, CLIENT_OPTIONS);
  return new Redis({
    ...CLIENT_OPTIONS,
    ...target.group,
    role: 'master',
    sentinelCommandTimeout: 500,
  });
}

/** The Redis client the counts are shared through, or null without REDIS_URL. */
export const RATE_LIMIT_REDIS = Symbol('RATE_LIMIT_REDIS');

export const rateLimitRedisProvider: FactoryProvider<Redis | null> = {
  provide: RATE_LIMIT_REDIS,
  inject: [ConfigService],
  useFactory: (config: ConfigService<AppConfig, true>) => {
    const url = config.get('rateLimit.redisUrl', { infer: true });
    return url ? createRedisClient(url) : null;
  },
};

/** One request counted against a key. */
export interface RateLimitCount {
  /** Requests counted in the window, this one included. */
  consumed: number;
  /** Requests the key may still send in the window. */
  remaining: number;
  /** Whether this request is past the limit. */
  refused: boolean;
  /** Milliseconds until the count starts again; for a refused request, until the key may send again. */
  msBeforeNext: number;
}

declare module 'rate-limiter-flexible' {
  interface RateLimiterRedis {
    /** The one store call every count and block makes (the library's contract for a store limiter). */
    _upsert(
      rlKey: string,
      points: number,
      msDuration: number,
      forceExpire?: boolean,
      options?: object,
    ): Promise<unknown>;
  }
}

/**
 * The Redis limiter, telling whether each call to Redis was answered. The library answers a failed
 * call from its insurance limiter without a word; the service says when counting stops and starts
 * being shared.
 */
class ReportingRedisLimiter extends RateLimiterRedis {
  constructor(
    options: ConstructorParameters<typeof RateLimiterRedis>[0],
    private readonly report: (failure?: Error) => void,
  ) {
    super(options);
  }

  override async _upsert(...args: Parameters<RateLimiterRedis['_upsert']>): Promise<unknown> {
    let reply: unknown;
    try {
      reply = await super._upsert(...args);
    } catch (error) {
      this.report(error as Error);
      throw error;
    }
    this.report();
    return reply;
  }
}

/**
 * Where request counts live: rate-limiter-flexible's fixed window of RATE_LIMIT_WINDOW_MS per key,
 * a key past the limit refused for as long again. With REDIS_URL every instance counts in one Redis
 * (RateLimiterRedis), so a caller has one budget however many instances serve it; without, each
 * instance counts in memory (RateLimiterMemory).
 *
 * Redis is a shared limit, not a dependency of the API: a call Redis does not answer is counted by
 * the insurance limiter, in memory (a per-instance budget), until Redis answers again; both changes
 * are logged.
 */
@Injectable()
export class RateLimitStorage implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis?: Redis;
  private readonly limiter: RateLimiterMemory | RateLimiterRedis;
  private redisDown = false;

  constructor(config: ConfigService<AppConfig, true>, @Inject(RATE_LIMIT_REDIS) redis: Redis | null) {
    const options = {
      points: config.get('rateLimit.perMinute', { infer: true }),
      duration: RATE_LIMIT_WINDOW_MS / 1000,
      blockDuration: RATE_LIMIT_WINDOW_MS / 1000,
      keyPrefix: RATE_LIMIT_KEY_PREFIX,
    };
    if (!redis) {
      this.limiter = new RateLimiterMemory(options);
      return;
    }
    this.redis = redis;
    // A failed call is reported once per outage (report()); this keeps ioredis quiet.
    redis.on('error', () => undefined);
    this.limiter = new ReportingRedisLimiter(
      {
        ...options,
        storeClient: redis,
        // Straight to memory while the client is (re)connecting, without asking ioredis.
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(options),
      },
      (failure) => this.report(failure),
    );
  }

  /**
   * Gives Redis a moment to connect before the first request, so a normal start is not reported as
   * an outage. A Redis that is down at start-up does not hold the service up.
   */
  async onModuleInit(): Promise<void> {
    if (!this.redis || this.redis.status === 'ready') return;
    const ready = await Promise.race([
      once(this.redis, 'ready').then(() => true),
      sleep(STARTUP_WAIT_MS).then(() => false),
    ]);
    if (!ready) {
      this.redisDown = true;
      this.logger.warn('Redis is unreachable at start-up; counting rate limits per instance until it answers');
    }
  }

  /** Whether counts are currently shared through Redis (false when unset or unreachable). */
  get sharedInRedis(): boolean {
    return this.redis !== undefined && !this.redisDown;
  }

  /** Counts one request against `key`; never refuses for Redis being away, only for the limit. */
  async consume(key: string): Promise<RateLimitCount> {
    let res: RateLimiterRes;
    let refused = false;
    try {
      res = await this.limiter.consume(key);
    } catch (rejection) {
      // The library refuses with the count itself; anything else is a failure to pass on.
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res = rejection;
      refused = true;
    }
    return {
      consumed: res.consumedPoints,
      remaining: res.remainingPoints,
      refused,
      msBeforeNext: res.msBeforeNext,
    };
  }

  private report(failure?: Error): void {
    if (failure === undefined) {
      if (!this.redisDown) return;
      this.redisDown = false;
      this.logger.log('Redis is reachable again; rate limits are shared across instances');
    } else if (!this.redisDown) {
      this.redisDown = true;
      this.logger.warn(`Redis is unreachable (${failure.message}); counting rate limits per instance until it returns`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis && this.redis.status !== 'end') {
      const client = this.redis;
      // QUIT can fail after the server closed the connection; disconnecting an ended client would
      // only leave a 2 s timer behind.
      await client.quit().catch(() => {
        if (client.status !== 'end') client.disconnect();
      });
    }
  }
}
