import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { EventOutbox } from './events/event-outbox.service';
import { WebhookDeliveryMetrics, WebhookOutboxMetrics } from './webhooks.metrics';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';

describe(WebhookDeliveryMetrics.name, () => {
  let registry: Registry;
  let repository: { dueBacklog: jest.Mock; countSubscriptions: jest.Mock };
  let metrics: WebhookDeliveryMetrics;

  beforeEach(async () => {
    registry = new Registry();
    repository = {
      dueBacklog: jest.fn().mockResolvedValue({ due: 12, oldestDueMs: 90_500 }),
      countSubscriptions: jest.fn().mockResolvedValue({ enabled: 7, disabled: 2 }),
    };
    const moduleRef = await Test.createTestingModule({
      providers: [
        WebhookDeliveryMetrics,
        { provide: MetricsService, useValue: { registry } },
        { provide: DeliveriesRepository, useValue: repository },
        { provide: SubscriptionsRepository, useValue: repository },
      ],
    }).compile();
    metrics = moduleRef.get(WebhookDeliveryMetrics);
  });

  /** The sample lines of one scrape. */
  const scrape = async () => (await registry.metrics()).split('\n').filter((line) => line && !line.startsWith('#'));

  it('reads the backlog and the subscriptions when scraped, one statement for the backlog', async () => {
    expect(repository.dueBacklog).not.toHaveBeenCalled();
    await expect(scrape()).resolves.toEqual([
      'webhook_subscriptions_disabled_total 0',
      'webhook_attempts_in_flight 0',
      'webhook_deliveries_due 12',
      'webhook_oldest_due_delivery_age_seconds 90.5',
      'webhook_subscriptions{state="enabled"} 7',
      'webhook_subscriptions{state="disabled"} 2',
    ]);
    expect(repository.dueBacklog).toHaveBeenCalledTimes(1);

    repository.dueBacklog.mockResolvedValue({ due: 0, oldestDueMs: 0 });
    await expect(scrape()).resolves.toEqual(
      expect.arrayContaining(['webhook_deliveries_due 0', 'webhook_oldest_due_delivery_age_seconds 0']),
    );
    expect(repository.dueBacklog).toHaveBeenCalledTimes(2);
  });

  it('reports NaN for what the database could not tell, and the rest as usual', async () => {
    repository.dueBacklog.mockRejectedValue(new Error('ECONNREFUSED'));
    repository.countSubscriptions.mockRejectedValue(new Error('ECONNREFUSED'));
    metrics.attemptsInFlight.inc();
    // prom-client writes NaN as `Nan`, which Prometheus reads as NaN.
    await expect(scrape()).resolves.toEqual([
      'webhook_subscriptions_disabled_total 0',
      'webhook_attempts_in_flight 1',
      'webhook_deliveries_due Nan',
      'webhook_oldest_due_delivery_age_seconds Nan',
      'webhook_subscriptions{state="enabled"} Nan',
      'webhook_subscriptions{state="disabled"} Nan',
    ]);
  });

  it('declares the attempts the dispatcher counts, by event type and result', async () => {
    metrics.deliveries.inc({ event: 'plant.created', result: 'delivered' });
    metrics.duration.observe({ event: 'plant.created' }, 0.2);
    const text = await registry.metrics();
    expect(text).toContain('webhook_deliveries_total{event="plant.created",result="delivered"} 1');
    expect(text).toContain('webhook_delivery_duration_seconds_bucket{le="0.25",event="plant.created"} 1');
  });
});

describe(WebhookOutboxMetrics.name, () => {
  it("counts the outbox's recorded deliveries, read when Prometheus scrapes", async () => {
    const registry = new Registry();
    const outbox = { deliveriesRecorded: 0 };
    new WebhookOutboxMetrics({ registry } as MetricsService, outbox as EventOutbox);
    const scraped = async () =>
      (await registry.getSingleMetric('webhook_deliveries_recorded_total')!.get()).values[0].value;
    await expect(scraped()).resolves.toBe(0);
    outbox.deliveriesRecorded = 3;
    await expect(scraped()).resolves.toBe(3);
    outbox.deliveriesRecorded = 6;
    await expect(scraped()).resolves.toBe(6);
  });
});
