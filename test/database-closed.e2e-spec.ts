import { Type } from '@nestjs/common';
import { ApiToken } from '../src/auth/api-token.entity';
import { SCOPE_NAMES } from '../src/auth/scopes';
import { TokensRepository } from '../src/auth/tokens.repository';
import { DatabaseUnavailable } from '../src/common/filters/server.errors';
import { IdempotencyRepository } from '../src/idempotency/idempotency.repository';
import { PlantsRepository } from '../src/plants/plants.repository';
import { ClaimedDelivery } from '../src/webhooks/deliveries/claims';
import { DeliveriesRepository } from '../src/webhooks/deliveries/deliveries.repository';
import { EventsRepository } from '../src/webhooks/events/events.repository';
import { SubscriptionsRepository } from '../src/webhooks/subscriptions/subscriptions.repository';
import { testDatabases } from './utils/databases';
import { DOCUMENTED, bodyOf, pathOf } from './utils/operations';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

const key = { owner: 'closed', key: 'k' };
/** A condition of the form the events repository gives (the statement never reaches the database). */
const unwatched = { sql: 'NOT EXISTS (SELECT 1)', parameters: [] };
const delivery: ClaimedDelivery = {
  id: 1n,
  eventId: 1n,
  subscriptionId: 1n,
  owner: 'closed',
  type: 'plant.created',
  data: '{"id":1,"name":"Fern"}',
  occurredAt: 0,
  attempts: 0,
  retryFrom: 0,
  url: 'https://example.com/',
  sealedSecret: 'sealed',
  previousSealedSecret: null,
  disabled: false,
};
const token = Object.assign(new ApiToken(), {
  id: 'closed-token',
  tokenHash: 'h'.repeat(64),
  subject: 'closed',
  scopes: 'plants:read',
  name: null,
  createdAt: new Date(),
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
});

/**
 * Arguments for every method of every repository, private ones included: a method added without a
 * line here fails the test, so none can reach the database another way unseen.
 */
const CALLS: [Type<object>, Record<string, unknown[]>][] = [
  [
    PlantsRepository,
    {
      newRow: ['closed', { id: 1n, name: 'Fern' }],
      insert: [[{ owner: 'closed', id: 1n, name: 'Fern' }], [{ owner: 'closed', id: 1n, name: 'Fern' }, unwatched]],
      composed: [
        ['insert', unwatched],
        ['delete', unwatched],
      ],
      page: [
        ['closed', 10],
        ['closed', 10, 1n],
      ],
      delete: [
        ['closed', 1n],
        ['closed', 1n, unwatched],
      ],
    },
  ],
  [
    TokensRepository,
    {
      insert: [token],
      findByHash: [token.tokenHash],
      findById: [token.id],
      list: [[], ['closed']],
      setLastUsed: [token.id, new Date()],
      setRevoked: [token.id, new Date()],
      count: [],
    },
  ],
  [
    IdempotencyRepository,
    {
      insert: [key, 'f', 'c', 1000, 1000],
      find: [key],
      takeOver: [key, 'f', 'c', 1000, 1000],
      complete: [key, 'c', { statusCode: 200, response: '{}' }, 1000],
      release: [key, 'c'],
      sealedAnswers: ['v1.', 'v1.new.', key, 10],
      replaceAnswer: [key, 'old', 'new'],
      purgeExpired: [10],
    },
  ],
  [
    SubscriptionsRepository,
    {
      insertSubscription: [
        {
          id: 1n,
          owner: 'closed',
          url: 'https://example.com/',
          events: ['plant.created'],
          description: null,
          sealedSecret: 's',
          createdAt: 0,
        },
        10,
      ],
      listSubscriptions: ['closed'],
      ownersSince: [-1n, 10],
      getSubscription: ['closed', 1n],
      updateSubscription: [
        ['closed', 1n, { url: 'https://example.com/', description: null }],
        ['closed', 1n, { enabled: false }],
      ],
      rotateSecret: [
        ['closed', 1n, 's', 1000],
        ['closed', 1n, 's', 0],
      ],
      sendingTarget: ['closed', 1n],
      findSubscription: ['closed', 1n],
      findSubscriptionState: ['closed', 1n],
      takeTestLease: [1n, 25_000],
      endTestLease: [1n, 0],
      deleteSubscription: ['closed', 1n],
      secretsNotStartingWith: ['v1.new.', 1n, 10],
      previousSecretsNotStartingWith: ['v1.new.', 1n, 10],
      replaceSecret: [1n, 'old', 'new'],
      replacePreviousSecret: [1n, 'old', 'new'],
      countSubscriptions: [],
      changeOf: [{ url: 'https://example.com/' }],
      toRow: [{ publicId: '1', url: 'u', events: '[]', createdAt: '0' }],
    },
  ],
  [
    DeliveriesRepository,
    {
      holdPending: [1n],
      forgetSubscription: [1n],
      resend: [
        [1n, { eventId: 1n }],
        [1n, { deliveryId: 1n }],
      ],
      startRecovery: [1n, 0],
      recoverNext: [10],
      recentAttempts: [1n, 10],
      claimDue: [
        [10, 1000, 'c'],
        [10, 1000, 'c', { subscription: () => 1, owner: () => 1 }],
      ],
      recordAttempt: [delivery, 'c', { statusCode: 500, error: null, durationMs: 1 }, { kind: 'failed' }, 1000],
      recordAttempts: [
        'c',
        [{ delivery, attempt: { statusCode: 204, error: null, durationMs: 1 }, outcome: { kind: 'delivered' } }],
        1000,
      ],
      updateFailureClockAfter: [1n, [{ kind: 'delivered' }, { kind: 'failed' }], 1000],
      insertAttempts: [
        // One argument list (an array inside) rather than several.
        [[{ delivery, attempt: { statusCode: 204, error: null, durationMs: 1 }, outcome: { kind: 'delivered' } }]],
      ],
      updateDeliveries: [
        'c',
        [
          {
            delivery,
            attempt: { statusCode: 500, error: null, durationMs: 1 },
            outcome: { kind: 'retry', delayMs: 10 },
          },
          { delivery, attempt: { statusCode: 204, error: null, durationMs: 1 }, outcome: { kind: 'delivered' } },
        ],
      ],
      updateFailureClock: [
        [1n, { kind: 'failed' }, 1000],
        [1n, { kind: 'disable', reason: 'gone' }, 1000],
      ],
      dueBacklog: [],
      prune: [1000],
    },
  ],
  [
    EventsRepository,
    {
      noSubscriptionWants: ['closed', ['plant.created']],
      subscriptionWants: ['closed', ['plant.created']],
      recordEvents: ['closed', [{ type: 'plant.created', data: '{}' }]],
      listEvents: ['closed', { limit: 10, order: 'asc', after: 1n, types: ['plant.created'], since: 0, until: 1 }],
      prune: [1000],
      recordingOf: ['plant.created'],
    },
  ],
];

/** Several argument lists for one method are written as an array of arrays. */
const argumentLists = (args: unknown[]): unknown[][] =>
  args.length > 0 && args.every(Array.isArray) ? (args as unknown[][]) : [args];

/**
 * Once the data source is closed (the service shutting down, or the database gone for good), every
 * statement of every repository fails with an error the exception filter answers 503
 * `{error, message}`, never a driver's TypeError that would become a 500.
 */
describe.each(testDatabases())('Repositories on a closed data source on %s', (database) => {
  let t: TestApp;
  let secret: string;

  beforeAll(async () => {
    t = await startTestApp(database, { ...WEBHOOK_TEST_ENV, TOKEN_CACHE_TTL_MS: '300000' });
    await t.reset();
    secret = await t.token({ subject: 'closed', scopes: [...SCOPE_NAMES] });
    // Cached from here on: requests reach the routes with the database closed.
    expect((await t.http().get('/plants').set(bearer(secret))).status).toBe(200);
    await t.dataSource.destroy();
  });
  afterAll(() => t.close());

  describe.each(CALLS.map(([repository, calls]) => [repository.name, repository, calls] as const))(
    '%s',
    (_name, repository, calls) => {
      const methods = Object.getOwnPropertyNames(repository.prototype).filter((name) => name !== 'constructor');

      it('has arguments for every method here', () => {
        expect(Object.keys(calls).sort()).toEqual([...methods].sort());
      });

      it.each(methods)('%s fails as the database being unavailable, or answers at once without it', async (method) => {
        const instance = t.app.get(repository) as Record<string, (...args: unknown[]) => unknown>;
        for (const args of argumentLists(calls[method] ?? [])) {
          const answer = instance[method](...args);
          // A method that answers without a promise sends nothing (the statements are all asynchronous).
          if (!(answer instanceof Promise)) continue;
          const error = await answer.then(
            () => new Error(`${method} succeeded on a closed data source`),
            (e: unknown) => e,
          );
          expect({ method, unavailable: error instanceof DatabaseUnavailable }).toEqual({ method, unavailable: true });
        }
      });
    },
  );

  // Every operation behind a token (the document's; a new one is covered once documented), and each
  // idempotent one with a key as well, whose lookup is the first statement it sends.
  it.each(
    DOCUMENTED.filter(({ needsToken }) => needsToken).flatMap((operation) => [
      [operation.label, '', operation, undefined] as const,
      ...(operation.idempotent
        ? [[operation.label, ' with an Idempotency-Key', operation, 'closed-key'] as const]
        : []),
    ]),
  )('answers %s%s with 503 {error, message}', async (_label, _with, operation, idempotencyKey) => {
    let req = t.http()[operation.method.toLowerCase() as 'get'](pathOf(operation)).set(bearer(secret));
    if (idempotencyKey) req = req.set('Idempotency-Key', idempotencyKey);
    const res = operation.takesBody
      ? await req.set('Content-Type', 'application/json').send(bodyOf(operation))
      : await req;
    expectErrorBody(res, 503);
    expect(res.body.message).toBe(new DatabaseUnavailable().message);
  });
});
