import { Controller, Delete, HttpCode, Post } from '@nestjs/common';
import { ApiExcludeController, ApiExcludeEndpoint } from '@nestjs/swagger';
import { SCOPE_NAMES } from '../src/auth/scopes';
import { Idempotent } from '../src/idempotency/idempotent.decorator';
import { testDatabases } from './utils/databases';
import { OpenApiDocument, Operation, bodyOf, missingSamples, operationsOf, successPathOf } from './utils/operations';
import { appRoutes, unsafeRoutesNotIdempotent } from './utils/routes';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

/**
 * The route rule of @Idempotent(): every POST, PUT, PATCH and DELETE route of every controller the
 * application registers carries it, whether or not the OpenAPI document shows the route, and every
 * operation that documents `Idempotency-Key` does what the document says: a repeat with the same
 * key, path and body gets the first answer again, marked `Idempotent-Replayed: true`. What each
 * operation is sent comes from test/utils/operations.ts, which fails the test for an operation it has
 * nothing for.
 */
describe.each(testDatabases())('Operations that change something, on %s', (database) => {
  let t: TestApp;
  let token: string;
  let operations: Operation[];

  beforeAll(async () => {
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
    await t.reset();
    token = await t.token({ subject: 'idempotent-routes', scopes: [...SCOPE_NAMES] });
    operations = operationsOf((await t.http().get('/docs-json')).body as OpenApiDocument);
  });
  afterAll(() => t.close());

  it('are @Idempotent(), every POST, PUT, PATCH and DELETE route of every controller, hidden ones included', () => {
    const routes = appRoutes(t.app);
    expect(routes.filter((route) => route.idempotent).length).toBeGreaterThan(0);
    expect(unsafeRoutesNotIdempotent(routes)).toEqual([]);
  });

  it('document the key where they are documented, and each has what the replay sends it', () => {
    const unsafe = operations.filter(({ method }) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method));
    expect(unsafe.filter((operation) => !operation.idempotent).map(({ label }) => label)).toEqual([]);
    expect(missingSamples(operations)).toEqual([]);
  });

  it('replay the first answer to a repeat of each of them', async () => {
    for (const operation of operations.filter(({ idempotent }) => idempotent)) {
      const path = await successPathOf(operation, t, token);
      const body = operation.takesBody ? bodyOf(operation) : undefined;
      const method = operation.method.toLowerCase() as 'post';
      const send = () => {
        const request = t.http()[method](path).set(bearer(token)).set('Idempotency-Key', `replay-${operation.id}`);
        return body === undefined ? request : request.set('Content-Type', 'application/json').send(body);
      };
      const first = await send();
      const repeat = await send();
      expect({ operation: operation.id, status: first.status }).toEqual({
        operation: operation.id,
        status: Number(Object.keys(operation.responses).find((status) => status.startsWith('2'))),
      });
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(repeat.status).toBe(first.status);
      expect(repeat.headers['idempotent-replayed']).toBe('true');
      expect(repeat.text).toBe(first.text);
    }
  });
});

/** Routes the OpenAPI document does not show, as a route kept out of it would be: one without the decorator, one with it. */
@ApiExcludeController()
@Controller('hidden-unsafe')
class HiddenUnsafeController {
  @Post()
  @HttpCode(204)
  change(): void {}

  @Delete()
  @Idempotent()
  @HttpCode(204)
  async remove(): Promise<void> {}
}

@Controller('excluded-endpoint')
class ExcludedEndpointController {
  @Delete(':id')
  @ApiExcludeEndpoint()
  @HttpCode(204)
  remove(): void {}
}

describe('The rule of @Idempotent(), on routes the OpenAPI document does not show', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('sqlite', {}, { testControllers: [HiddenUnsafeController, ExcludedEndpointController] });
  });
  afterAll(() => t.close());

  it('names each unsafe route without the decorator, which the document alone would not show', async () => {
    const document = (await t.http().get('/docs-json')).body as OpenApiDocument;
    expect(Object.keys(document.paths).filter((path) => /hidden|excluded/.test(path))).toEqual([]);
    expect(unsafeRoutesNotIdempotent(appRoutes(t.app))).toEqual([
      'POST /hidden-unsafe (HiddenUnsafeController.change)',
      'DELETE /excluded-endpoint/{id} (ExcludedEndpointController.remove)',
    ]);
  });
});
