import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { totalReadAtScrape } from '../metrics/totals.metrics';
import { perScrape } from '../metrics/per-scrape';
import { EventOutbox } from './events/event-outbox.service';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';

/** The buckets of an attempt's duration, in seconds: from a receiver on the same network to WEBHOOK_TIMEOUT_MS's most. */
export const ATTEMPT_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The delivery as this instance sees it. Its attempts are counted by the dispatcher, which is given
 * these metrics, as each starts and ends (no request waits on an attempt). The backlog and the
 * subscriptions of the whole database are read when Prometheus scrapes (nothing is counted on the
 * way of a request); every instance reports them alike (aggregate with `max`). A gauge whose
 * database read fails reports NaN: Prometheus keeps the scrape, and the panel shows a gap.
 */
@Injectable()
export class WebhookDeliveryMetrics {
  readonly deliveries: Counter<'event' | 'result'>;
  readonly duration: Histogram<'event'>;
  readonly disabledSubscriptions: Counter;
  readonly attemptsInFlight: Gauge;

  constructor(metrics: MetricsService, deliveries: DeliveriesRepository, subscriptions: SubscriptionsRepository) {
    const registers = [metrics.registry];
    this.deliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by event type and result (delivered, retry, failed, gone, refused)',
      labelNames: ['event', 'result'],
      registers,
    });
    this.duration = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Webhook delivery attempts from connect to response, by event type',
      labelNames: ['event'],
      buckets: ATTEMPT_DURATION_BUCKETS,
      registers,
    });
    this.disabledSubscriptions = new Counter({
      name: 'webhook_subscriptions_disabled_total',
      help: 'Webhook subscriptions this instance disabled: the endpoint answered 410, or failed for WEBHOOK_DISABLE_AFTER',
      registers,
    });
    this.attemptsInFlight = new Gauge({
      name: 'webhook_attempts_in_flight',
      help: 'Webhook delivery attempts this instance is making now',
      registers,
    });

    // One statement serves both backlog gauges of a scrape.
    const backlog = perScrape(() => deliveries.dueBacklog().catch(() => undefined));
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
        const counts = await subscriptions.countSubscriptions().catch(() => undefined);
        this.set({ state: 'enabled' }, counts?.enabled ?? Number.NaN);
        this.set({ state: 'disabled' }, counts?.disabled ?? Number.NaN);
      },
    });
  }
}

/**
 * The deliveries this instance recorded with plant changes, read from the outbox when Prometheus
 * scrapes: a change adds to a number and nothing else. API instances only, as the outbox.
 */
@Injectable()
export class WebhookOutboxMetrics {
  constructor(metrics: MetricsService, outbox: EventOutbox) {
    totalReadAtScrape(
      metrics.registry,
      'webhook_deliveries_recorded_total',
      'Webhook deliveries recorded with plant changes: one per event and subscription that wants it, held ones included',
      () => outbox.deliveriesRecorded,
    );
  }
}
