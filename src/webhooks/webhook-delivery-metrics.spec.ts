import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { WebhookDeliveryMetrics } from './webhook-delivery-metrics';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksRepository } from './webhooks.repository';

describe(WebhookDeliveryMetrics.name, () => {
  let registry: Registry;
  let repository: { dueBacklog: jest.Mock; countSubscriptions: jest.Mock };
  let dispatcher: { attemptsInFlight: number };

  beforeEach(async () => {
    registry = new Registry();
    repository = {
      dueBacklog: jest.fn().mockResolvedValue({ due: 12, oldestDueMs: 90_500 }),
      countSubscriptions: jest.fn().mockResolvedValue({ enabled: 7, disabled: 2 }),
    };
    dispatcher = { attemptsInFlight: 3 };
    const moduleRef = await Test.createTestingModule({
      providers: [
        WebhookDeliveryMetrics,
        { provide: MetricsService, useValue: { registry } },
        { provide: WebhooksRepository, useValue: repository },
        { provide: WebhookDispatcher, useValue: dispatcher },
      ],
    }).compile();
    moduleRef.get(WebhookDeliveryMetrics);
  });

  /** The sample lines of one scrape. */
  const scrape = async () => (await registry.metrics()).split('\n').filter((line) => line && !line.startsWith('#'));

  it('reads the backlog, the subscriptions and the attempts in flight when scraped, one statement for the backlog', async () => {
    expect(repository.dueBacklog).not.toHaveBeenCalled();
    await expect(scrape()).resolves.toEqual([
      'webhook_deliveries_due 12',
      'webhook_oldest_due_delivery_age_seconds 90.5',
      'webhook_subscriptions{state="enabled"} 7',
      'webhook_subscriptions{state="disabled"} 2',
      'webhook_attempts_in_flight 3',
    ]);
    expect(repository.dueBacklog).toHaveBeenCalledTimes(1);

    repository.dueBacklog.mockResolvedValue({ due: 0, oldestDueMs: 0 });
    dispatcher.attemptsInFlight = 0;
    await expect(scrape()).resolves.toEqual(
      expect.arrayContaining([
        'webhook_deliveries_due 0',
        'webhook_oldest_due_delivery_age_seconds 0',
        'webhook_attempts_in_flight 0',
      ]),
    );
    expect(repository.dueBacklog).toHaveBeenCalledTimes(2);
  });

  it('reports NaN for what the database could not tell, and the rest as usual', async () => {
    repository.dueBacklog.mockRejectedValue(new Error('ECONNREFUSED'));
    repository.countSubscriptions.mockRejectedValue(new Error('ECONNREFUSED'));
    // prom-client writes NaN as `Nan`, which Prometheus reads as NaN.
    await expect(scrape()).resolves.toEqual([
      'webhook_deliveries_due Nan',
      'webhook_oldest_due_delivery_age_seconds Nan',
      'webhook_subscriptions{state="enabled"} Nan',
      'webhook_subscriptions{state="disabled"} Nan',
      'webhook_attempts_in_flight 3',
    ]);
  });
});
