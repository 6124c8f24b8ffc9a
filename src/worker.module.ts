import { DynamicModule, Module } from '@nestjs/common';
import { AppConfigModule } from './config/config.module';
import { DatabaseMetricsModule } from './database/database.metrics';
import { DatabaseModule } from './database/database.module';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { LogOutput } from './logging/log-output';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { SecretsMetricsModule } from './secrets/secrets.metrics';
import { WebhookDeliveryModule } from './webhooks/deliveries/webhook-delivery.module';

/**
 * A webhook worker (`plantstore worker`): the configuration, database, log and metrics of the
 * service, and webhook delivery, without the API. It serves no HTTP but its metrics listener.
 */
@Module({
  imports: [
    AppConfigModule,
    MetricsModule,
    SecretsMetricsModule,
    DatabaseModule,
    DatabaseMetricsModule,
    LifecycleModule,
    WebhookDeliveryModule,
  ],
})
export class WorkerModule {
  /** `logOutput`: the one made before Nest started (see main.ts); tests leave it out. */
  static forRoot(logOutput?: LogOutput): DynamicModule {
    return { module: WorkerModule, imports: [LoggingModule.forRoot(logOutput)] };
  }
}
