import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { perScrape } from '../metrics/per-scrape';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksRepository } from './webhooks.repository';

/**
 * What the delivery looks like from here, read when Prometheus scrapes (nothing is counted on the
 * way of a request): the backlog and the subscriptions of the whole database, which every
 * instance reports alike (aggregate with `max`), and this instance's attempts in flight. A gauge
 * whose database read fails reports NaN: Prometheus keeps the scrape, and the panel shows a gap.
 */
@Injectable()
export class WebhookDeliveryMetrics {
  constructor(metrics: MetricsService, repository: WebhooksRepository, dispatcher: WebhookDispatcher) {
    const registers = [metrics.registry];
    // One statement serves both backlog gauges of a scrape.
    const backlog = perScrape(() => repository.dueBacklog().catch(() => undefined));
    new Gauge({
      name: 'webhook_deliveries_due',
      help: 'Webhook deliveries whose attempt is due and not yet claimed, in the whole database',
      registers,
      async collect() {
        this.set((await backlog())?.due ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'webhook_oldest_due_delivery_age_seconds',
      help: 'How long the webhook delivery due longest has waited to be claimed (0 when none is due)',
      registers,
      async collect() {
        const read = await backlog();
        this.set(read ? read.oldestDueMs / 1000 : Number.NaN);
      },
    });
    new Gauge({
      name: 'webhook_subscriptions',
      help: 'Webhook subscriptions in the whole database, by state: enabled or disabled',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await repository.countSubscriptions().catch(() => undefined);
        this.set({ state: 'enabled' }, counts?.enabled ?? Number.NaN);
        this.set({ state: 'disabled' }, counts?.disabled ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'webhook_attempts_in_flight',
      help: 'Webhook delivery attempts this instance is making now',
      registers,
      collect() {
        this.set(dispatcher.attemptsInFlight);
      },
    });
  }
}
