import { Module } from '@nestjs/common';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SecretsModule } from '../secrets/secrets.module';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Subscriptions over the API, and the dispatcher that delivers what the plants triggers record. */
@Module({
  imports: [LifecycleModule, MetricsModule, SecretsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhooksRepository, WebhookDispatcher],
})
export class WebhooksModule {}
