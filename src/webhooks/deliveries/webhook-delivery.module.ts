import { Module } from '@nestjs/common';
import { LifecycleModule } from '../../lifecycle/lifecycle.module';
import { MetricsModule } from '../../metrics/metrics.module';
import { SecretsModule } from '../../secrets/secrets.module';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookDeliveryMetrics } from '../webhooks.metrics';
import { EventsRepository } from '../events/events.repository';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { DeliveriesRepository } from './deliveries.repository';

/**
 * Delivery of recorded events, on its own so a worker (src/worker.module.ts) runs it without the API: the
 * dispatcher, the tables it reads and writes, and its metrics.
 */
@Module({
  imports: [LifecycleModule, MetricsModule, SecretsModule],
  providers: [
    DeliveriesRepository,
    SubscriptionsRepository,
    EventsRepository,
    WebhookDispatcher,
    WebhookDeliveryMetrics,
  ],
  exports: [DeliveriesRepository, SubscriptionsRepository, EventsRepository],
})
export class WebhookDeliveryModule {}
