import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { SecretsModule } from '../secrets/secrets.module';
import { EventOutbox } from './events/event-outbox.service';
import { WebhookDeliveryModule } from './deliveries/webhook-delivery.module';
import { EventsController } from './events/events.controller';
import { SubscribedOwners } from './subscriptions/subscribed-owners';
import { WebhooksController } from './webhooks.controller';
import { WebhookOutboxMetrics } from './webhooks.metrics';
import { WebhooksService } from './webhooks.service';

/**
 * Subscriptions over the API, the outbox that records a plant change's events with it, and (unless
 * WEBHOOK_DELIVERY=false) their delivery from this instance.
 */
@Module({
  imports: [WebhookDeliveryModule, SecretsModule, MetricsModule],
  controllers: [WebhooksController, EventsController],
  providers: [WebhooksService, EventOutbox, SubscribedOwners, WebhookOutboxMetrics],
  exports: [EventOutbox],
})
export class WebhooksModule {}
