import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, Reflector } from '@nestjs/core';
import { AuthModule } from './auth/auth.module';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { MemoizedReflector } from './common/metadata/memoized-reflector';
import { createValidationPipe } from './common/validation/validation.pipe';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { DocsModule } from './docs/docs.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { RequestLogMiddleware } from './logging/request-log.middleware';
import { HttpMetricsMiddleware } from './metrics/http-metrics.middleware';
import { MetricsModule } from './metrics/metrics.module';
import { PlantsModule } from './plants/plants.module';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { RateLimitModule } from './rate-limit/rate-limit.module';

@Module({
  imports: [
    AppConfigModule,
    LoggingModule,
    MetricsModule,
    DatabaseModule,
    AuthModule,
    RateLimitModule,
    HealthModule,
    PlantsModule,
    DocsModule,
  ],
  providers: [
    // The global guards read route metadata on every request; it never changes once built.
    { provide: Reflector, useClass: MemoizedReflector },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    // Guards run in this order: the rate limit first, so failed authentications are limited too.
    { provide: APP_GUARD, useClass: RateLimitGuard },
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_PIPE, useFactory: createValidationPipe },
  ],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Mounted at '/', which Express matches as the prefix of every path, known or not; a wildcard
    // route ('*path') would be matched as a pattern, with its parameters decoded, on every request.
    consumer.apply(RequestLogMiddleware, HttpMetricsMiddleware).forRoutes('/');
  }
}
