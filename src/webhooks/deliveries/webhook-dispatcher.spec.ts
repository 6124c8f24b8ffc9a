import { ConfigService } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../config/configuration';
import { RETRY_JITTER } from '../../config/env/webhooks';
import { ShutdownState } from '../../lifecycle/shutdown-state';
import { MetricsService } from '../../metrics/metrics.service';
import { SecretBox } from '../../secrets/secret-box';
import { SecretsService } from '../../secrets/secrets.service';
import { newSigningSecret } from '../subscriptions/signing-secret';
import { WebhookDispatcher, outcomeOf, retryDelayMs } from './webhook-dispatcher';
import { RETENTION_MS } from '../webhooks.limits';
import { WebhookDeliveryMetrics } from '../webhooks.metrics';
import { AttemptOutcome, AttemptRecord, ClaimRoom, ClaimedDelivery, FinishedAttempt } from './claims';
import { DeliveriesRepository } from './deliveries.repository';
import { EventsRepository } from '../events/events.repository';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { deliveryBody } from '../events/events';

const OCCURRED_AT = Date.UTC(2026, 10, 24, 9, 30, 0, 5);
const BEYOND_2_53 = 2n ** 53n + 1n;

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

const KEY = randomBytes(32);
const SECRET = newSigningSecret();
const TIMEOUT_MS = 2000;
const ENV = {
  WEBHOOK_SECRET_KEY: KEY.toString('base64'),
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '20',
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
};

function delivery(fields: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: 1n,
    eventId: 41n,
    subscriptionId: 10n,
    owner: 'alice',
    type: 'plant.created',
    data: `{"id":${BEYOND_2_53},"name":"Fern"}`,
    occurredAt: OCCURRED_AT,
    attempts: 0,
    retryFrom: 0,
    url: 'http://127.0.0.1:9/',
    sealedSecret: new SecretBox([KEY]).seal(SECRET),
    previousSealedSecret: null,
    disabled: false,
    ...fields,
  };
}

/** What claimDue resolves to: these deliveries, nothing more due. */
const batch = (deliveries: ClaimedDelivery[]) => ({ deliveries, more: false });

interface Received {
  path?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Recorded = [ClaimedDelivery, string, AttemptRecord, AttemptOutcome, number];

/** Polls `condition` until it holds (a few seconds at most). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe(WebhookDispatcher.name, () => {
  const servers: Server[] = [];
  let moduleRef: TestingModule | undefined;
  let dispatcher: WebhookDispatcher;
  let registry: Registry;
  let repository: Record<'claimDue' | 'recordAttempts' | 'prune' | 'recoverNext', jest.Mock>;
  /** The first attempt recorded, with the other arguments of its recordAttempts. */
  let recorded: Promise<Recorded>;

  beforeEach(() => {
    let resolveRecorded: (args: Recorded) => void;
    recorded = new Promise((resolve) => (resolveRecorded = resolve));
    repository = {
      claimDue: jest.fn().mockResolvedValue(batch([])),
      recoverNext: jest.fn().mockResolvedValue(0),
      recordAttempts: jest.fn(async (claim: string, finished: FinishedAttempt[], disableAfterMs: number) => {
        for (const { delivery, attempt, outcome } of finished)
          resolveRecorded([delivery, claim, attempt, outcome, disableAfterMs]);
        return new Set(
          finished.filter(({ outcome }) => outcome.kind === 'disable').map((f) => f.delivery.subscriptionId),
        );
      }),
      prune: jest.fn().mockResolvedValue(undefined),
    };
  });

  afterEach(async () => {
    jest.useRealTimers();
    await moduleRef?.close();
    moduleRef = undefined;
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** A local endpoint that records each request, its body read in full, before `answer` runs. */
  async function receiver(answer: (response: ServerResponse) => void) {
    const received: Received[] = [];
    let resolveFirst: () => void;
    const first = new Promise<void>((resolve) => (resolveFirst = resolve));
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ path: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        resolveFirst();
        answer(response);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/hooks/plants?v=1`, received, first };
  }

  async function start(env: Record<string, string> = ENV): Promise<void> {
    registry = new Registry();
    moduleRef = await Test.createTestingModule({
      providers: [
        WebhookDispatcher,
        ShutdownState,
        { provide: DeliveriesRepository, useValue: repository },
        // Events are pruned with the deliveries: one mock's `prune` sees both.
        { provide: EventsRepository, useValue: { prune: repository.prune } },
        { provide: SubscriptionsRepository, useValue: {} },
        WebhookDeliveryMetrics,
        { provide: MetricsService, useValue: { registry } },
        { provide: ConfigService, useValue: new ConfigService(loadConfig(env)) },
        SecretsService,
      ],
    }).compile();
    moduleRef.useLogger(false);
    dispatcher = moduleRef.get(WebhookDispatcher);
    await moduleRef.init();
  }

  async function counted() {
    return (await registry.getSingleMetric('webhook_deliveries_total')!.get()).values;
  }

  it('sends a signed delivery to the receiver, records it as delivered and counts it', async () => {
    const endpoint = await receiver((response) => response.writeHead(204).end());
    const claimed = delivery({ url: endpoint.url });
    repository.claimDue.mockResolvedValueOnce(batch([claimed]));
    await start();

    const [recordedDelivery, claim, attempt, outcome, disableAfterMs] = await recorded;
    await dispatcher.stop();

    expect(repository.claimDue).toHaveBeenCalledWith(128, 2 * TIMEOUT_MS + 5000, claim, expect.anything());
    expect(repository.prune).toHaveBeenCalledWith(RETENTION_MS);
    expect(repository.recordAttempts).toHaveBeenCalledTimes(1);
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

    await expect(counted()).resolves.toEqual([{ labels: { event: 'plant.created', result: 'delivered' }, value: 1 }]);
  });

  it.each([
    ['a 500 on the first attempt', 500, 0, { kind: 'retry', delayMs: expect.any(Number) }, 'retry'],
    ['a 500 on the last attempt', 500, 7, { kind: 'failed' }, 'failed'],
    ['a 410', 410, 0, { kind: 'disable', reason: 'the endpoint answered 410 Gone' }, 'gone'],
  ])('records %s as its outcome', async (_label, status, attempts, expected, result) => {
    const endpoint = await receiver((response) => response.writeHead(status).end());
    repository.claimDue.mockResolvedValueOnce(
      batch([delivery({ url: endpoint.url, attempts, type: 'plant.deleted' })]),
    );
    await start();

    const [, , attempt, outcome] = await recorded;
    await dispatcher.stop();

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
    await expect(counted()).resolves.toEqual([{ labels: { event: 'plant.deleted', result }, value: 1 }]);
    const disabled = (await registry.getSingleMetric('webhook_subscriptions_disabled_total')!.get()).values;
    expect(disabled).toEqual([{ labels: {}, value: result === 'gone' ? 1 : 0 }]);
  });

  it('counts an attempt in flight from its start until it has been recorded', async () => {
    let answer = () => undefined as unknown;
    const endpoint = await receiver((response) => (answer = () => response.writeHead(204).end()));
    repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await start();
    const inFlight = async () => (await registry.getSingleMetric('webhook_attempts_in_flight')!.get()).values[0].value;

    await endpoint.first;
    await expect(inFlight()).resolves.toBe(1);
    answer();
    await recorded;
    await dispatcher.stop();
    await expect(inFlight()).resolves.toBe(0);
  });

  it('does not contact a URL resolving to a private address when those are refused', async () => {
    const endpoint = await receiver((response) => response.writeHead(204).end());
    repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await start({ ...ENV, WEBHOOK_ALLOW_PRIVATE: 'false' });

    const [, , attempt, outcome] = await recorded;
    await dispatcher.stop();

    expect(endpoint.received).toHaveLength(0);
    expect(attempt).toEqual({
      statusCode: null,
      error: 'url resolves to 127.0.0.1, a loopback address',
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual({ kind: 'retry', delayMs: expect.any(Number) });
    await expect(counted()).resolves.toEqual([{ labels: { event: 'plant.created', result: 'refused' }, value: 1 }]);
  });

  it('does not send a secret it cannot open, and tells the subscriber no more than that the sender failed', async () => {
    const endpoint = await receiver((response) => response.writeHead(204).end());
    const sealedSecret = new SecretBox([randomBytes(32)]).seal(SECRET);
    repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url, sealedSecret })]));
    await start();

    const [, , attempt, outcome] = await recorded;
    await dispatcher.stop();

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
    const endpoint = await receiver((response) => response.writeHead(204).end());
    const previous = newSigningSecret();
    const lost = new SecretBox([randomBytes(32)]).seal(newSigningSecret());
    repository.claimDue.mockResolvedValueOnce(
      batch([
        delivery({ url: endpoint.url, previousSealedSecret: new SecretBox([KEY]).seal(previous) }),
        delivery({ id: 2n, eventId: null, url: endpoint.url, previousSealedSecret: lost }),
      ]),
    );
    await start();
    await waitUntil(() => endpoint.received.length === 2 && repository.recordAttempts.mock.calls.length > 0);
    await dispatcher.stop();
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

  it("claims within each subscription's and owner's share of the slots, counting its attempts in flight", async () => {
    const held: ServerResponse[] = [];
    const endpoint = await receiver((response) => held.push(response));
    repository.claimDue.mockResolvedValueOnce(
      batch([
        delivery({ id: 1n, url: endpoint.url }),
        delivery({ id: 2n, url: endpoint.url }),
        delivery({ id: 3n, subscriptionId: 11n, url: endpoint.url }),
      ]),
    );
    await start({ ...ENV, WEBHOOK_SUBSCRIPTION_CONCURRENCY: '3', WEBHOOK_OWNER_CONCURRENCY: '5' });
    await waitUntil(() => endpoint.received.length === 3 && repository.claimDue.mock.calls.length > 1);
    const room = repository.claimDue.mock.calls.at(-1)![3] as ClaimRoom;
    expect([room.subscription(10n), room.subscription(11n), room.subscription(12n)]).toEqual([1, 2, 3]);
    expect([room.owner('alice'), room.owner('bob')]).toEqual([2, 5]);
    for (const response of held) response.writeHead(204).end();
    await waitUntil(() => repository.recordAttempts.mock.calls.flatMap(([, finished]) => finished).length === 3);
    await dispatcher.stop();
    expect([room.subscription(10n), room.owner('alice')]).toEqual([3, 5]);
  });

  it('counts every attempt in flight within the caps, two of one delivery included, and waits for both at stop()', async () => {
    const held: ServerResponse[] = [];
    const endpoint = await receiver((response) => held.push(response));
    // The same delivery claimed again while its first attempt runs: its lease ended first (its
    // outcome slow to be recorded, say).
    repository.claimDue
      .mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]))
      .mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await start({
      ...ENV,
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: '3',
      WEBHOOK_OWNER_CONCURRENCY: '3',
    });
    const inFlight = async () => (await registry.getSingleMetric('webhook_attempts_in_flight')!.get()).values[0].value;
    /** What the next claim is given, once the dispatcher has claimed again after this point. */
    const nextClaim = async () => {
      const claims = repository.claimDue.mock.calls.length;
      await waitUntil(() => repository.claimDue.mock.calls.length > claims);
      const [free, , , room] = repository.claimDue.mock.calls.at(-1)! as [number, number, string, ClaimRoom];
      return { free, subscription: room.subscription(10n), owner: room.owner('alice') };
    };
    const recordedAttempts = () => repository.recordAttempts.mock.calls.flatMap(([, finished]) => finished).length;

    await waitUntil(() => held.length === 2);
    await expect(nextClaim()).resolves.toEqual({ free: 2, subscription: 1, owner: 1 });
    await expect(inFlight()).resolves.toBe(2);

    held[0].writeHead(204).end();
    await waitUntil(() => recordedAttempts() === 1);
    await expect(nextClaim()).resolves.toEqual({ free: 3, subscription: 2, owner: 2 });
    await expect(inFlight()).resolves.toBe(1);

    const stopping = dispatcher.stop();
    held[1].writeHead(204).end();
    await stopping;
    expect(recordedAttempts()).toBe(2);
    await expect(inFlight()).resolves.toBe(0);
  });

  it("counts a resent delivery's retries from its resend", async () => {
    const endpoint = await receiver((response) => response.writeHead(500).end());
    // Its schedule was spent before the resend: 8 attempts made, all before it.
    repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url, attempts: 8, retryFrom: 8 })]));
    await start();
    const [, , , outcome] = await recorded;
    await dispatcher.stop();
    expect(outcome).toEqual({ kind: 'retry', delayMs: expect.any(Number) });
  });

  it('holds a delivery of a disabled subscription without sending it', async () => {
    const endpoint = await receiver((response) => response.writeHead(204).end());
    const claimed = delivery({ url: endpoint.url, disabled: true });
    repository.claimDue.mockResolvedValueOnce(batch([claimed]));
    await start();

    const [recordedDelivery, claim, attempt, outcome] = await recorded;
    await dispatcher.stop();

    expect(endpoint.received).toHaveLength(0);
    expect(recordedDelivery).toBe(claimed);
    expect(claim).toBe(repository.claimDue.mock.calls[0][2]);
    expect(attempt).toEqual({ statusCode: null, error: null, durationMs: 0, startedAt: expect.any(Number) });
    expect(outcome).toEqual({ kind: 'hold' });
    await expect(counted()).resolves.toEqual([]);
  });

  it('does not start without WEBHOOK_SECRET_KEY', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    await start({ ...ENV, WEBHOOK_SECRET_KEY: '' });
    expect(dispatcher.enabled).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(repository.claimDue).not.toHaveBeenCalled();
    await expect(dispatcher.stop()).resolves.toBeUndefined();
  });

  it('records attempts that finish while a batch is being recorded together, in the next batch', async () => {
    const endpoint = await receiver((response) => response.writeHead(204).end());
    const claimed = [1n, 2n, 3n].map((id) => delivery({ id, url: endpoint.url }));
    repository.claimDue.mockResolvedValueOnce(batch(claimed));
    // The first batch takes a while to record: the other two attempts finish meanwhile.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const batches: bigint[][] = [];
    repository.recordAttempts.mockImplementation(async (_claim: string, finished: FinishedAttempt[]) => {
      batches.push(finished.map(({ delivery }) => delivery.id));
      if (batches.length === 1) await firstHeld;
      return new Set<bigint>();
    });
    // An attempt has finished when it is handed to record(), which is after its receiver answered.
    const finished = jest.spyOn(
      WebhookDispatcher.prototype as unknown as { record: (attempt: FinishedAttempt) => Promise<boolean> },
      'record',
    );
    await start();
    await waitUntil(() => finished.mock.calls.length === 3 && batches.length === 1);
    releaseFirst();
    await waitUntil(() => batches.length === 2);
    await dispatcher.stop();
    expect(batches.flat().sort()).toEqual([1n, 2n, 3n]);
    expect(batches[1]).toHaveLength(3 - batches[0].length);
    finished.mockRestore();
    expect(await counted()).toEqual([
      expect.objectContaining({ value: 3, labels: expect.objectContaining({ result: 'delivered' }) }),
    ]);
  });

  it('stop() waits for the attempt in flight, and nothing is claimed after', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const endpoint = await receiver((response) => setTimeout(() => response.writeHead(200).end(), 300));
    repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await start();
    await jest.advanceTimersByTimeAsync(0);
    await endpoint.first;
    const claims = repository.claimDue.mock.calls.length;

    let stopped = false;
    const stopping = dispatcher.stop().then(() => (stopped = true));
    // Several poll intervals pass while the receiver has not answered yet.
    await jest.advanceTimersByTimeAsync(299);
    expect(stopped).toBe(false);
    expect(repository.recordAttempts).not.toHaveBeenCalled();

    await jest.advanceTimersByTimeAsync(1);
    await stopping;
    expect(repository.recordAttempts).toHaveBeenCalledTimes(1);
    const [, , attempt, outcome] = await recorded;
    expect(attempt).toEqual({
      statusCode: 200,
      error: null,
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual({ kind: 'delivered' });

    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(repository.claimDue).toHaveBeenCalledTimes(claims);
  });
});
