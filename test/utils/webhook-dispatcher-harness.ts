import { ConfigService } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/configuration';
import { ShutdownState } from '../../src/lifecycle/shutdown-state';
import { MetricsService } from '../../src/metrics/metrics.service';
import { SecretBox } from '../../src/secrets/secret-box';
import { SecretsService } from '../../src/secrets/secrets.service';
import { AttemptOutcome, AttemptRecord, ClaimedDelivery, FinishedAttempt } from '../../src/webhooks/deliveries/claims';
import { DeliveriesRepository } from '../../src/webhooks/deliveries/deliveries.repository';
import { WebhookDispatcher } from '../../src/webhooks/deliveries/webhook-dispatcher';
import { EventsRepository } from '../../src/webhooks/events/events.repository';
import { newSigningSecret } from '../../src/webhooks/subscriptions/signing-secret';
import { SubscriptionsRepository } from '../../src/webhooks/subscriptions/subscriptions.repository';
import { WebhookDeliveryMetrics } from '../../src/webhooks/webhooks.metrics';

export const OCCURRED_AT = Date.UTC(2026, 10, 24, 9, 30, 0, 5);
export const BEYOND_2_53 = 2n ** 53n + 1n;
export const KEY = randomBytes(32);
export const SECRET = newSigningSecret();
export const TIMEOUT_MS = 2000;
export const ENV = {
  WEBHOOK_SECRET_KEY: KEY.toString('base64'),
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '20',
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
};

/** A claimed delivery of alice's subscription 10 (to an address nothing listens on, unless `fields` say). */
export function delivery(fields: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
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
export const batch = (deliveries: ClaimedDelivery[]) => ({ deliveries, more: false });

export interface Received {
  path?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Recorded = [ClaimedDelivery, string, AttemptRecord, AttemptOutcome, number];

/** Polls `condition` until it holds (a few seconds at most). */
export async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

export interface DispatcherHarness {
  dispatcher: WebhookDispatcher;
  registry: Registry;
  /** The deliveries repository's methods the dispatcher calls, mocked; `prune` is the events' too. */
  repository: Record<'claimDue' | 'recordAttempts' | 'prune' | 'recoverNext', jest.Mock>;
  /** The first attempt recorded, with the other arguments of its recordAttempts. */
  recorded: Promise<Recorded>;
  /** A local endpoint that records each request, its body read in full, before `answer` runs. */
  receiver(
    answer: (response: ServerResponse) => void,
  ): Promise<{ url: string; received: Received[]; first: Promise<void> }>;
  /** Starts the dispatcher with `env` as its settings. */
  start(env?: Record<string, string>): Promise<void>;
  /** The samples of webhook_deliveries_total. */
  counted(): Promise<{ value: number; labels: Record<string, string | number> }[]>;
}

/**
 * The dispatcher with mocked repositories and real senders, metrics and secrets, and local
 * endpoints, made anew for each test and closed after it: what the dispatcher specs share.
 */
export function dispatcherHarness(): DispatcherHarness {
  const servers: Server[] = [];
  let moduleRef: TestingModule | undefined;
  const h = {
    async receiver(answer: (response: ServerResponse) => void) {
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
    },
    async start(env: Record<string, string> = ENV) {
      h.registry = new Registry();
      moduleRef = await Test.createTestingModule({
        providers: [
          WebhookDispatcher,
          ShutdownState,
          { provide: DeliveriesRepository, useValue: h.repository },
          // Events are pruned with the deliveries: one mock's `prune` sees both.
          { provide: EventsRepository, useValue: { prune: h.repository.prune } },
          { provide: SubscriptionsRepository, useValue: {} },
          WebhookDeliveryMetrics,
          { provide: MetricsService, useValue: { registry: h.registry } },
          { provide: ConfigService, useValue: new ConfigService(loadConfig(env)) },
          SecretsService,
        ],
      }).compile();
      moduleRef.useLogger(false);
      h.dispatcher = moduleRef.get(WebhookDispatcher);
      await moduleRef.init();
    },
    async counted() {
      return (await h.registry.getSingleMetric('webhook_deliveries_total')!.get()).values;
    },
  } as DispatcherHarness;

  beforeEach(() => {
    let resolveRecorded: (args: Recorded) => void;
    h.recorded = new Promise((resolve) => (resolveRecorded = resolve));
    h.repository = {
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

  return h;
}
