import { DynamicModule, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { GLOBAL_PROVIDERS } from './app.providers';
import { AuthModule } from './auth/auth.module';
import { AppConfigModule } from './config/config.module';
import { DatabaseMetricsModule } from './database/database.metrics';
import { DatabaseModule } from './database/database.module';
import { DeprecatedRoutes } from './deprecation/deprecated-routes';
import { DeprecationModule } from './deprecation/deprecation.module';
import { DocsModule } from './docs/docs.module';
import { HealthModule } from './health/health.module';
import { inOneLayer } from './common/http/in-one-layer';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { LogOutput } from './logging/log-output';
import { LoggingModule } from './logging/logging.module';
import { RequestLogMiddleware } from './logging/request-log.middleware';
import { HttpMetricsMiddleware } from './metrics/http-metrics.middleware';
import { MetricsModule } from './metrics/metrics.module';
import { PlantsModule } from './plants/plants.module';
import { RateLimitMiddleware } from './rate-limit/rate-limit.middleware';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { SecretsMetricsModule } from './secrets/secrets.metrics';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({
  imports: [
    AppConfigModule,
    MetricsModule,
    SecretsMetricsModule,
    DatabaseModule,
    DatabaseMetricsModule,
    AuthModule,
    RateLimitModule,
    HealthModule,
    IdempotencyModule,
    PlantsModule,
    WebhooksModule,
    DocsModule,
    DeprecationModule,
  ],
  providers: GLOBAL_PROVIDERS,
})
export class AppModule implements NestModule {
  constructor(private readonly deprecatedRoutes: DeprecatedRoutes) {}

  /**
   * The application. `logOutput`: the log output main.ts made before Nest started; tests and scripts
   * leave it out, and the app makes its own from the configuration.
   */
  static forRoot(logOutput?: LogOutput): DynamicModule {
    return { module: AppModule, imports: [LoggingModule.forRoot(logOutput)] };
  }

  configure(consumer: MiddlewareConsumer): void {
    // First, so that every answer of a deprecated route says so, a 429 included; mounted on those
    // routes alone, and not at all while none is deprecated.
    this.deprecatedRoutes.apply(consumer);
    // Mounted at '/', which Express matches as the prefix of every path, known or not; a wildcard
    // route ('*path') would be matched as a pattern, with its parameters decoded, on every request.
    // The rate limit comes before anything that costs: a token lookup, routing, the body. Every
    // request passes through all three in this order, so they run as one layer.
    consumer.apply(inOneLayer(RequestLogMiddleware, HttpMetricsMiddleware, RateLimitMiddleware)).forRoutes('/');
  }
}
