import { Module } from '@nestjs/common';
import { LifecycleModule } from '../../lifecycle/lifecycle.module';
import { MetricsModule } from '../../metrics/metrics.module';
import { SecretsModule } from '../../secrets/secrets.module';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookDeliveryMetrics } from '../webhooks.metrics';
import { WebhooksRepository } from '../webhooks.repository';

/**
 * Delivery of recorded events, on its own so a worker (src/worker.module.ts) runs it without the API: the
 * dispatcher, the tables it reads and writes, and its metrics.
 */
@Module({
  imports: [LifecycleModule, MetricsModule, SecretsModule],
  providers: [WebhooksRepository, WebhookDispatcher, WebhookDeliveryMetrics],
  exports: [WebhooksRepository],
})
export class WebhookDeliveryModule {}
