import { Module } from '@nestjs/common';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SecretsModule } from '../secrets/secrets.module';
import { EventOutbox } from './event-outbox.service';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/**
 * Subscriptions over the API, the outbox that records a plant change's events with it, and the
 * dispatcher that delivers them.
 */
@Module({
  imports: [LifecycleModule, MetricsModule, SecretsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhooksRepository, WebhookDispatcher, EventOutbox],
  exports: [EventOutbox],
})
export class WebhooksModule {}
