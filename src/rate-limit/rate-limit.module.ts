import { Module } from '@nestjs/common';
import { OidcModule } from '../auth/oidc/oidc.module';
import { TokensModule } from '../auth/tokens.module';
import { RateLimitMiddleware } from './rate-limit.middleware';
import { RateLimitStorage, rateLimitRedisProvider } from './rate-limit.storage';

/**
 * RATE_LIMIT_PER_MINUTE requests per caller per minute, counted in Redis or in memory. The limit
 * itself is a global middleware (RateLimitMiddleware), mounted in AppModule.
 */
@Module({
  imports: [TokensModule, OidcModule],
  providers: [rateLimitRedisProvider, RateLimitStorage, RateLimitMiddleware],
  exports: [RateLimitStorage, RateLimitMiddleware, TokensModule, OidcModule],
})
export class RateLimitModule {}
