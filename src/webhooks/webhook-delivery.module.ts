import { Module } from '@nestjs/common';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SecretsModule } from '../secrets/secrets.module';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksRepository } from './webhooks.repository';

/**
 * Delivery of recorded events, on its own so a worker (src/worker.module.ts) runs it without the API: the
 * dispatcher and the tables it reads and writes.
 */
@Module({
  imports: [LifecycleModule, MetricsModule, SecretsModule],
  providers: [WebhooksRepository, WebhookDispatcher],
  exports: [WebhooksRepository],
})
export class WebhookDeliveryModule {}
