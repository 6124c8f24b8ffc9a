import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import Redis, { RedisOptions } from 'ioredis';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/configuration';
import { parseRedisUrl } from '../config/redis-url';
import { MemoryCounter } from './memory-counter';

const STARTUP_WAIT_MS = 1000;

/** A primary that was demoted to a replica answers writes with READONLY. */
const READONLY = /^READONLY\b/;

/** Fail fast instead of queueing: a request must never wait for Redis to come back. */
const CLIENT_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 500,
  connectTimeout: 2000,
  retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
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

/**
 * Where request counts live. With REDIS_URL every instance counts in one Redis, so a caller has
 * one budget however many instances serve it; without, each instance counts in memory.
 *
 * Redis is a shared limit, not a dependency of the API: when it is unreachable the service keeps
 * answering, counting in memory (a per-instance budget) until Redis is back, and logs both changes.
 */
@Injectable()
export class RateLimitStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly memory = new MemoryCounter();
  private readonly redis?: Redis;
  private readonly shared?: ThrottlerStorageRedisService;
  private redisDown = false;

  constructor(config: ConfigService<AppConfig, true>) {
    const url = config.get('rateLimit.redisUrl', { infer: true });
    if (!url) return;
    this.redis = createRedisClient(url);
    // Connection errors are reported once per outage by increment(); this keeps ioredis quiet.
    this.redis.on('error', () => undefined);
    this.shared = new ThrottlerStorageRedisService(this.redis);
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
    return this.shared !== undefined && !this.redisDown;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): ReturnType<ThrottlerStorage['increment']> {
    if (this.shared) {
      try {
        const record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
        if (this.redisDown) {
          this.redisDown = false;
          this.logger.log('Redis is reachable again; rate limits are shared across instances');
        }
        return record;
      } catch (error) {
        if (!this.redisDown) {
          this.redisDown = true;
          this.logger.warn(
            `Redis is unreachable (${(error as Error).message}); counting rate limits per instance until it returns`,
          );
        }
      }
    }
    return this.memory.increment(`${key}:${throttlerName}`, ttl, limit, blockDuration);
  }

  async onApplicationShutdown(): Promise<void> {
    this.memory.close();
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
