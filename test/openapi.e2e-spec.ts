import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from '../src/plants/plants.limits';
import { DOCUMENTED, OpenApiDocument, Operation, operationsOf } from './utils/operations';
import { appRoutes } from './utils/routes';
import { TestApp, startTestApp } from './utils/test-app';

describe('OpenAPI document', () => {
  let t: TestApp;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an arbitrary JSON document, walked by path
  let served: Record<string, any>;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    served = (await t.http().get('/docs-json').expect(200)).body;
  });
  afterAll(() => t.close());

  it('matches the committed openapi.json (run `npm run openapi` after changing the API)', () => {
    const committed = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8'));
    expect(served).toEqual(committed);
  });

  it('documents every route of the application but those kept out of it on purpose, and no other', () => {
    const routes = appRoutes(t.app);
    expect(routes.some((route) => route.hidden)).toBe(true);
    expect(
      operationsOf(served as OpenApiDocument)
        .map(({ label }) => label)
        .sort(),
    ).toEqual(
      routes
        .filter((route) => !route.hidden)
        .map(({ label }) => label)
        .sort(),
    );
  });

  it("is the service's version of the interface, with the contract's schema names", () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(served.info.version).toBe(version);
    expect(Object.keys(served.components.schemas).sort()).toEqual([
      'CreatedWebhook',
      'Error',
      'Event',
      'Health',
      'NewPlant',
      'NewWebhook',
      'Plant',
      'PlantCreatedEvent',
      'PlantCreatedEventData',
      'PlantDeletedEvent',
      'PlantDeletedEventData',
      'ResentWebhookDelivery',
      'RotatedWebhook',
      'Webhook',
      'WebhookAttempt',
      'WebhookChange',
      'WebhookRecovery',
      'WebhookRecoveryStarted',
      'WebhookSecretRotation',
      'WebhookTestEvent',
      'WebhookTestEventData',
      'WebhookTestResult',
    ]);
    expect(served.components.schemas.Error.required).toEqual(['error', 'message']);
    expect(served.components.schemas.Error.properties.error).toMatchObject({ type: 'integer', format: 'int32' });
    expect(served.components.schemas.NewPlant.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(served.components.schemas.NewPlant.properties.name).toMatchObject({
      minLength: 1,
      maxLength: PLANT_NAME_MAX_LENGTH,
    });
    expect(served.components.schemas.NewPlant.properties.tag).toMatchObject({
      minLength: 1,
      maxLength: PLANT_TAG_MAX_LENGTH,
    });
  });

  // What every call with a token can answer (test/documented-refusals.e2e-spec.ts provokes each), and
  // what an operation answers for what it is: one that takes a body, names a resource, or takes an
  // Idempotency-Key.
  const EVERY_CALL = ['400', '401', '403', '408', '413', '417', '429', '431', '500', '503'];
  const statusesOf = (operation: Operation) => [
    ...EVERY_CALL,
    ...(operation.takesBody ? ['415'] : []),
    ...(operation.pathParameters.length > 0 ? ['404'] : []),
    ...(operation.idempotent ? ['409', '422'] : []),
  ];
  it.each(DOCUMENTED.filter(({ needsToken }) => needsToken).map((operation) => [operation.label, operation] as const))(
    'documents every status of %s, errors with the Error schema, behind bearer auth',
    (_label, operation) => {
      const { responses, security } = served.paths[operation.path][operation.method.toLowerCase()];
      const statuses = Object.keys(responses);
      expect(statuses.filter((status) => status.startsWith('2'))).toHaveLength(1);
      expect(statuses).toEqual(expect.arrayContaining(statusesOf(operation)));
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect({ status, schema: responses[status].content['application/json'].schema }).toEqual({
          status,
          schema: { $ref: '#/components/schemas/Error' },
        });
      }
      expect(security).toEqual([{ bearer: [] }]);
    },
  );

  it('describes the webhook events with their bodies (x-webhooks, as OpenAPI 3.1 webhooks)', () => {
    const events = (served as unknown as { 'x-webhooks': Record<string, { post: { requestBody: unknown } }> })[
      'x-webhooks'
    ];
    expect(Object.keys(events).sort()).toEqual(['plant.created', 'plant.deleted', 'webhook.test']);
    expect(events['webhook.test'].post.requestBody).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookTestEvent' } } },
    });
    expect(events['plant.created'].post.requestBody).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/PlantCreatedEvent' } } },
    });
    expect(served.components.schemas.PlantCreatedEventData.properties.id).toMatchObject({
      type: 'integer',
      format: 'int64',
    });
    expect(served.tags.find((tag: { name: string }) => tag.name === 'webhooks').description).toMatch(
      /webhook-signature/,
    );
  });

  it('documents the rate limit headers of every 429', () => {
    const limited = DOCUMENTED.filter(({ responses }) => responses['429'] !== undefined);
    expect(limited.length).toBeGreaterThan(0);
    for (const { path, method } of limited) {
      expect(Object.keys(served.paths[path][method.toLowerCase()].responses['429'].headers).sort()).toEqual([
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
      ]);
    }
  });

  it('declares no token exactly on the @Public() routes', () => {
    const documented = appRoutes(t.app).filter((route) => !route.hidden);
    expect(documented.some((route) => route.isPublic) && documented.some((route) => !route.isPublic)).toBe(true);
    expect(
      documented.map(({ label, path, method }) => ({
        label,
        isPublic: served.paths[path][method.toLowerCase()].security.length === 0,
      })),
    ).toEqual(documented.map(({ label, isPublic }) => ({ label, isPublic })));
  });

  it("documents the health probes as public, with Node's refusals and the readiness 503 with the Error schema", () => {
    for (const path of ['/health/live', '/health/ready']) {
      // Declared empty rather than left out, which would mean "whatever the document requires".
      expect(served.paths[path].get.security).toEqual([]);
      expect(served.paths[path].get.responses['200']).toBeDefined();
      // Never rate limited and no token: only what Node's HTTP layer refuses, and a failure.
      for (const status of ['400', '408', '413', '417', '431', '500']) {
        expect(served.paths[path].get.responses[status].content['application/json'].schema).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
      expect(served.paths[path].get.responses['429']).toBeUndefined();
      expect(served.paths[path].get.responses['401']).toBeUndefined();
    }
    expect(served.paths['/health/ready'].get.responses['503'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
  });

  it('names its license and a server relative to where the document is served', () => {
    const { license } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(served.info.license).toEqual({ name: license, url: 'https://opensource.org/license/mit' });
    expect(served.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('documents Idempotency-Key on every @Idempotent() route, its 409 in progress, 422 and the replay header', () => {
    const idempotent = appRoutes(t.app).filter((route) => route.idempotent && !route.hidden);
    expect(idempotent.map(({ label }) => label).sort()).toEqual(
      DOCUMENTED.filter((operation) => operation.idempotent)
        .map(({ label }) => label)
        .sort(),
    );
    for (const { path, method } of idempotent) {
      const operation = served.paths[path][method.toLowerCase()];
      const key = operation.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
      expect(key).toMatchObject({ in: 'header', required: false, schema: { minLength: 1, maxLength: 255 } });
      expect(operation.responses['409'].description).toMatch(/Idempotency-Key is still in progress/);
      expect(operation.responses['422'].description).toMatch(/Idempotency-Key was already used/);
      const success = Object.keys(operation.responses).find((status) => status.startsWith('2'))!;
      expect(operation.responses[success].headers['Idempotent-Replayed']).toBeDefined();
    }
  });

  it('documents the bearer scheme, the limit and cursor parameters and the Link header', () => {
    expect(served.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const list = served.paths['/plants'].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', format: 'int32', minimum: 1, maximum: 2147483647 });
    expect(list.parameters.find((p: { name: string }) => p.name === 'after').schema).toMatchObject({ format: 'int64' });
    expect(list.responses['200'].headers.Link).toBeDefined();
    const id = served.paths['/plants/{id}'].delete.parameters.find((p: { name: string }) => p.name === 'id');
    expect(id.schema).toMatchObject({ type: 'integer', format: 'int64' });
  });
});
