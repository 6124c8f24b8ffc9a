import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../config/configuration';
import { RateLimitStorage } from './rate-limit.storage';

export const RATE_LIMIT_WINDOW_MS = 60_000;

@Module({ providers: [RateLimitStorage], exports: [RateLimitStorage] })
class RateLimitStorageModule {}

/** RATE_LIMIT_PER_MINUTE requests per caller per minute. The guard is global, declared in AppModule. */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [ConfigService, RateLimitStorage],
      useFactory: (config: ConfigService<AppConfig, true>, storage: RateLimitStorage) => ({
        throttlers: [
          { name: 'default', ttl: RATE_LIMIT_WINDOW_MS, limit: config.get('rateLimit.perMinute', { infer: true }) },
        ],
        storage,
      }),
    }),
  ],
})
export class RateLimitModule {}
