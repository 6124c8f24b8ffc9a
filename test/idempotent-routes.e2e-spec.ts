import { SCOPE_NAMES } from '../src/auth/scopes';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

interface Operation {
  operationId: string;
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
}

/**
 * What each operation that documents `Idempotency-Key` is sent to show it replays, by operation id:
 * its path (a fresh target of its own, made by `target`) and body. An operation that documents the
 * key without an entry here fails the test: a new idempotent route is held to replaying from the day
 * it is documented.
 */
interface Call {
  path: (t: TestApp, token: string) => Promise<string>;
  body?: () => string;
}
const fresh = { id: 2n ** 53n + 1n };

/** A new subscription of the caller's, to a port nothing listens on: its path. */
async function subscription(t: TestApp, token: string, events = '["plant.created"]'): Promise<string> {
  const created = await t
    .http()
    .post('/webhooks')
    .set(bearer(token))
    .set('Content-Type', 'application/json')
    .send(`{"url":"http://127.0.0.1:9/target","events":${events}}`);
  return `/webhooks/${(created.body as { id: number }).id}`;
}
const CALLS: Record<string, Call> = {
  createPlant: { path: async () => '/plants', body: () => `{"id":${(fresh.id += 1n)},"name":"Fern","tag":"green"}` },
  deletePlant: {
    path: async (t, token) => {
      const id = (fresh.id += 1n);
      await t
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send(`{"id":${id},"name":"Doomed"}`);
      return `/plants/${id}`;
    },
  },
  createWebhook: {
    path: async () => '/webhooks',
    body: () => '{"url":"http://127.0.0.1:9/hooks","events":["plant.created"]}',
  },
  deleteWebhook: { path: (t, token) => subscription(t, token, '["plant.deleted"]') },
  updateWebhook: { path: subscription, body: () => '{"description":"Changed","enabled":false}' },
  rotateWebhookSecret: {
    path: async (t, token) => `${await subscription(t, token)}/rotate-secret`,
    body: () => '{"gracePeriodSeconds":60}',
  },
  testWebhook: { path: async (t, token) => `${await subscription(t, token)}/test` },
  resendWebhookDelivery: {
    path: async (t, token) => {
      const path = await subscription(t, token);
      const id = (fresh.id += 1n);
      await t
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send(`{"id":${id},"name":"Resent"}`);
      const [event] = (await t.http().get('/events?limit=1').set(bearer(token))).body as { id: string }[];
      return `${path}/deliveries/${event.id}/resend`;
    },
  },
  recoverWebhook: {
    path: async (t, token) => `${await subscription(t, token)}/recover`,
    body: () => `{"since":"${new Date(Date.now() - 3_600_000).toISOString()}"}`,
  },
};

/**
 * The route rule of @Idempotent(): every POST, PATCH and DELETE documents `Idempotency-Key`, and
 * every operation that documents it does what the document says: a repeat with the same key, path
 * and body gets the first answer again, marked `Idempotent-Replayed: true`.
 */
describe.each(testDatabases())('Operations that document Idempotency-Key, on %s', (database) => {
  let t: TestApp;
  let token: string;
  let operations: [string, string, Operation][];

  beforeAll(async () => {
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
    await t.reset();
    token = await t.token({ subject: 'idempotent-routes', scopes: [...SCOPE_NAMES] });
    const document = (await t.http().get('/docs-json')).body as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]): [string, string, Operation] => [method, path, operation]),
    );
  });
  afterAll(() => t.close());

  const documentsKey = (operation: Operation) =>
    (operation.parameters ?? []).some((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');

  it('finds the idempotent operations: each POST, PATCH and DELETE documents the key', () => {
    const unsafe = operations.filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method));
    expect(unsafe.map(([, , operation]) => operation.operationId).sort()).toEqual(Object.keys(CALLS).sort());
    for (const [, path, operation] of unsafe)
      expect({ path, documentsKey: documentsKey(operation) }).toEqual({ path, documentsKey: true });
  });

  it('replays the first answer to a repeat of each of them', async () => {
    for (const [method, , operation] of operations.filter(([, , operation]) => documentsKey(operation))) {
      const call = CALLS[operation.operationId];
      expect({ operation: operation.operationId, known: call !== undefined }).toEqual({
        operation: operation.operationId,
        known: true,
      });
      const path = await call.path(t, token);
      const body = call.body?.();
      const send = () => {
        const http = t.http();
        const request = (
          method === 'delete' ? http.delete(path) : method === 'patch' ? http.patch(path) : http.post(path)
        )
          .set(bearer(token))
          .set('Idempotency-Key', `replay-${operation.operationId}`);
        return body === undefined ? request : request.set('Content-Type', 'application/json').send(body);
      };
      const first = await send();
      const repeat = await send();
      expect({ operation: operation.operationId, status: first.status }).toEqual({
        operation: operation.operationId,
        status: Number(
          Object.keys((operation as { responses?: object }).responses ?? {}).find((s) => s.startsWith('2')),
        ),
      });
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(repeat.status).toBe(first.status);
      expect(repeat.headers['idempotent-replayed']).toBe('true');
      expect(repeat.text).toBe(first.text);
    }
  });
});
