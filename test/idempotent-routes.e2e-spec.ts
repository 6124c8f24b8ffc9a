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
 * A body each creating operation accepts, by operation id. An operation that documents
 * `Idempotency-Key` without a body here fails the test: a new creating route is held to replaying
 * from the day it is documented.
 */
const BODIES: Record<string, () => string> = {
  createPlant: () => `{"id":${2n ** 53n + 1n},"name":"Fern","tag":"green"}`,
  createWebhook: () => '{"url":"http://127.0.0.1:9/hooks","events":["plant.created"]}',
};

/**
 * The route rule of CreatesFromJsonBody: every POST that takes a JSON body documents
 * `Idempotency-Key`, and every operation that documents it does what the document says: a repeat
 * with the same key and body gets the first answer again, marked `Idempotent-Replayed: true`.
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

  it('finds the creating operations, and each POST with a JSON body documents the key', () => {
    const posts = operations.filter(([method, , operation]) => method === 'post' && operation.requestBody);
    expect(posts.map(([, , operation]) => operation.operationId).sort()).toEqual(Object.keys(BODIES).sort());
    for (const [, path, operation] of posts)
      expect({ path, documentsKey: documentsKey(operation) }).toEqual({ path, documentsKey: true });
  });

  it('replays the first answer to a repeat of each of them', async () => {
    for (const [method, path, operation] of operations.filter(([, , operation]) => documentsKey(operation))) {
      // The key is for requests that create: POST.
      expect({ operation: operation.operationId, method }).toEqual({
        operation: operation.operationId,
        method: 'post',
      });
      const body = BODIES[operation.operationId];
      expect({ operation: operation.operationId, hasBody: body !== undefined }).toEqual({
        operation: operation.operationId,
        hasBody: true,
      });
      const send = () =>
        t
          .http()
          .post(path)
          .set(bearer(token))
          .set('Idempotency-Key', `replay-${operation.operationId}`)
          .set('Content-Type', 'application/json')
          .send(body());
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
