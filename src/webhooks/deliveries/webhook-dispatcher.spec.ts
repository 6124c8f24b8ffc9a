import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../config/configuration';
import { RETRY_JITTER } from '../../config/env/webhooks';
import { SecretBox } from '../../secrets/secret-box';
import { newSigningSecret } from '../subscriptions/signing-secret';
import { RETENTION_MS } from '../webhooks.limits';
import { AttemptOutcome } from './claims';
import { deliveryBody } from '../events/events';
import {
  KEY,
  SECRET,
  TIMEOUT_MS,
  delivery,
  batch,
  waitUntil,
  dispatcherHarness,
  ENV,
} from '../../../test/utils/webhook-dispatcher-harness';
import { WebhookDispatcher, outcomeOf, retryDelayMs } from './webhook-dispatcher';

describe(retryDelayMs.name, () => {
  const schedule = [1000, 60_000];
  const [low, high] = [1 - RETRY_JITTER, 1 + RETRY_JITTER];

  it("waits the schedule's step for the attempts made, give or take RETRY_JITTER of it", () => {
    expect(retryDelayMs(schedule, 1, () => 0)).toBeCloseTo(1000 * low, 6);
    expect(retryDelayMs(schedule, 1, () => 0.5)).toBe(1000);
    expect(retryDelayMs(schedule, 1, () => 0.999_999)).toBeCloseTo(1000 * high, 2);
    expect(retryDelayMs(schedule, 2, () => 0)).toBeCloseTo(60_000 * low, 6);
    expect(retryDelayMs(schedule, 2, () => 0.999_999)).toBeCloseTo(60_000 * high, 0);
  });

  it('stays within the jitter with the default random source', () => {
    for (let i = 0; i < 200; i++) {
      const delay = retryDelayMs(schedule, 1)!;
      expect(delay).toBeGreaterThanOrEqual(1000 * low);
      expect(delay).toBeLessThanOrEqual(1000 * high);
    }
  });

  it('has no wait past the end of the schedule', () => {
    expect(retryDelayMs(schedule, 3, () => 0.5)).toBeUndefined();
    expect(retryDelayMs([], 1, () => 0.5)).toBeUndefined();
  });
});

describe(outcomeOf.name, () => {
  const schedule = [1000, 60_000];
  const retryAfterFirst = { kind: 'retry', delayMs: expect.any(Number) };

  function expectRetryDelay(outcome: AttemptOutcome, step: number): void {
    expect(outcome).toEqual(retryAfterFirst);
    const { delayMs } = outcome as { delayMs: number };
    expect(delayMs).toBeGreaterThanOrEqual(step * (1 - RETRY_JITTER));
    expect(delayMs).toBeLessThanOrEqual(step * (1 + RETRY_JITTER));
  }

  it.each([200, 201, 204, 299])('counts %i as delivered, even on the last attempt', (status) => {
    expect(outcomeOf({ status, durationMs: 5 }, 1, schedule)).toEqual({ kind: 'delivered' });
    expect(outcomeOf({ status, durationMs: 5 }, 3, schedule)).toEqual({ kind: 'delivered' });
  });

  it('disables the subscription on 410 Gone, whatever attempt it is', () => {
    const disable = { kind: 'disable', reason: 'the endpoint answered 410 Gone' };
    expect(outcomeOf({ status: 410, durationMs: 5 }, 1, schedule)).toEqual(disable);
    expect(outcomeOf({ status: 410, durationMs: 5 }, 3, schedule)).toEqual(disable);
  });

  it.each([
    ['a 300', { status: 300 }],
    ['a 301', { status: 301 }],
    ['a 199', { status: 199 }],
    ['a 400', { status: 400 }],
    ['a 404', { status: 404 }],
    ['a 429', { status: 429 }],
    ['a 500', { status: 500 }],
    ['a 503', { status: 503 }],
    ['an error', { error: 'connection refused' }],
  ])('retries after %s while the schedule lasts, then gives up', (_label, result) => {
    expectRetryDelay(outcomeOf({ ...result, durationMs: 5 }, 1, schedule), 1000);
    expectRetryDelay(outcomeOf({ ...result, durationMs: 5 }, 2, schedule), 60_000);
    expect(outcomeOf({ ...result, durationMs: 5 }, 3, schedule)).toEqual({ kind: 'failed' });
  });
});

describe(WebhookDispatcher.name, () => {
  const h = dispatcherHarness();

  it('sends a signed delivery to the receiver, records it as delivered and counts it', async () => {
    const endpoint = await h.receiver((response) => response.writeHead(204).end());
    const claimed = delivery({ url: endpoint.url });
    h.repository.claimDue.mockResolvedValueOnce(batch([claimed]));
    await h.start();

    const [recordedDelivery, claim, attempt, outcome, disableAfterMs] = await h.recorded;
    await h.dispatcher.stop();

    expect(h.repository.claimDue).toHaveBeenCalledWith(128, 2 * TIMEOUT_MS + 5000, claim, expect.anything());
    expect(h.repository.prune).toHaveBeenCalledWith(RETENTION_MS);
    expect(h.repository.recordAttempts).toHaveBeenCalledTimes(1);
    expect(recordedDelivery).toBe(claimed);
    expect(attempt).toEqual({
      statusCode: 204,
      error: null,
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual({ kind: 'delivered' });
    expect(disableAfterMs).toBe(5 * 86_400_000);

    expect(endpoint.received).toHaveLength(1);
    const [request] = endpoint.received;
    expect(request.path).toBe('/hooks/plants?v=1');
    expect(request.body).toBe(deliveryBody(claimed.type, claimed.occurredAt, claimed.data));
    // The event's id, shared by every subscription's delivery of it.
    expect(request.headers['webhook-id']).toBe('evt_41');
    expect(() => new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    expect(() =>
      new Webhook(newSigningSecret()).verify(request.body, request.headers as Record<string, string>),
    ).toThrow();

    await expect(h.counted()).resolves.toEqual([{ labels: { event: 'plant.created', result: 'delivered' }, value: 1 }]);
  });

  it.each([
    ['a 500 on the first attempt', 500, 0, { kind: 'retry', delayMs: expect.any(Number) }, 'retry'],
    ['a 500 on the last attempt', 500, 7, { kind: 'failed' }, 'failed'],
    ['a 410', 410, 0, { kind: 'disable', reason: 'the endpoint answered 410 Gone' }, 'gone'],
  ])('records %s as its outcome', async (_label, status, attempts, expected, result) => {
    const endpoint = await h.receiver((response) => response.writeHead(status).end());
    h.repository.claimDue.mockResolvedValueOnce(
      batch([delivery({ url: endpoint.url, attempts, type: 'plant.deleted' })]),
    );
    await h.start();

    const [, , attempt, outcome] = await h.recorded;
    await h.dispatcher.stop();

    expect(endpoint.received).toHaveLength(1);
    expect(attempt).toEqual({
      statusCode: status,
      error: null,
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual(expected);
    if (outcome.kind === 'retry') {
      // The default schedule's first step, give or take the jitter.
      const [firstStep] = loadConfig({}).webhooks.retryScheduleMs;
      expect(outcome.delayMs).toBeGreaterThanOrEqual(firstStep * (1 - RETRY_JITTER));
      expect(outcome.delayMs).toBeLessThanOrEqual(firstStep * (1 + RETRY_JITTER));
    }
    await expect(h.counted()).resolves.toEqual([{ labels: { event: 'plant.deleted', result }, value: 1 }]);
    const disabled = (await h.registry.getSingleMetric('webhook_subscriptions_disabled_total')!.get()).values;
    expect(disabled).toEqual([{ labels: {}, value: result === 'gone' ? 1 : 0 }]);
  });

  it('counts an attempt in flight from its start until it has been h.recorded', async () => {
    let answer = () => undefined as unknown;
    const endpoint = await h.receiver((response) => (answer = () => response.writeHead(204).end()));
    h.repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await h.start();
    const inFlight = async () =>
      (await h.registry.getSingleMetric('webhook_attempts_in_flight')!.get()).values[0].value;

    await endpoint.first;
    await expect(inFlight()).resolves.toBe(1);
    answer();
    await h.recorded;
    await h.dispatcher.stop();
    await expect(inFlight()).resolves.toBe(0);
  });

  it('does not contact a URL resolving to a private address when those are refused', async () => {
    const endpoint = await h.receiver((response) => response.writeHead(204).end());
    h.repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await h.start({ ...ENV, WEBHOOK_ALLOW_PRIVATE: 'false' });

    const [, , attempt, outcome] = await h.recorded;
    await h.dispatcher.stop();

    expect(endpoint.received).toHaveLength(0);
    expect(attempt).toEqual({
      statusCode: null,
      error: 'url resolves to 127.0.0.1, a loopback address',
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual({ kind: 'retry', delayMs: expect.any(Number) });
    await expect(h.counted()).resolves.toEqual([{ labels: { event: 'plant.created', result: 'refused' }, value: 1 }]);
  });

  it('does not send a secret it cannot open, and tells the subscriber no more than that the sender failed', async () => {
    const endpoint = await h.receiver((response) => response.writeHead(204).end());
    const sealedSecret = new SecretBox([randomBytes(32)]).seal(SECRET);
    h.repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url, sealedSecret })]));
    await h.start();

    const [, , attempt, outcome] = await h.recorded;
    await h.dispatcher.stop();

    expect(endpoint.received).toHaveLength(0);
    expect(attempt).toEqual({
      statusCode: null,
      error: 'internal error of the sender',
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual({ kind: 'retry', delayMs: expect.any(Number) });
  });

  it('signs with the secret a rotation replaced too, while it signs, and without it when it cannot be opened', async () => {
    const endpoint = await h.receiver((response) => response.writeHead(204).end());
    const previous = newSigningSecret();
    const lost = new SecretBox([randomBytes(32)]).seal(newSigningSecret());
    h.repository.claimDue.mockResolvedValueOnce(
      batch([
        delivery({ url: endpoint.url, previousSealedSecret: new SecretBox([KEY]).seal(previous) }),
        delivery({ id: 2n, eventId: null, url: endpoint.url, previousSealedSecret: lost }),
      ]),
    );
    await h.start();
    await waitUntil(() => endpoint.received.length === 2 && h.repository.recordAttempts.mock.calls.length > 0);
    await h.dispatcher.stop();
    const byId = (id: string) => endpoint.received.find((request) => request.headers['webhook-id'] === id)!;
    const rotating = byId('evt_41');
    expect(String(rotating.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [SECRET, previous]) {
      expect(() => new Webhook(secret).verify(rotating.body, rotating.headers as Record<string, string>)).not.toThrow();
    }
    // Recorded before events were: its own id. Its replaced secret is lost; the current one signs alone.
    const legacy = byId('msg_2');
    expect(String(legacy.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(SECRET).verify(legacy.body, legacy.headers as Record<string, string>)).not.toThrow();
  });
});
