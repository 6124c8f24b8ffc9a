import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from '../src/plants/plants.limits';
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

  it("is the service's version of the interface, with the contract paths and schema names", () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(served.info.version).toBe(version);
    expect(Object.keys(served.paths).sort()).toEqual([
      '/events',
      '/health/live',
      '/health/ready',
      '/plants',
      '/plants/{id}',
      '/webhooks',
      '/webhooks/{id}',
      '/webhooks/{id}/deliveries',
      '/webhooks/{id}/deliveries/{eventId}/resend',
      '/webhooks/{id}/recover',
      '/webhooks/{id}/rotate-secret',
      '/webhooks/{id}/test',
    ]);
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

  // What every call with a token can answer (test/documented-refusals.e2e-spec.ts provokes each).
  const EVERY_CALL = ['400', '401', '403', '408', '413', '417', '429', '431', '500', '503'];
  it.each([
    ['post', '/plants', ['200', ...EVERY_CALL, '409', '415', '422']],
    ['get', '/plants', ['200', ...EVERY_CALL]],
    ['delete', '/plants/{id}', ['204', ...EVERY_CALL, '404', '409', '422']],
    ['post', '/webhooks', ['201', ...EVERY_CALL, '409', '415', '422']],
    ['get', '/webhooks', ['200', ...EVERY_CALL]],
    ['delete', '/webhooks/{id}', ['204', ...EVERY_CALL, '404', '409', '422']],
    ['get', '/webhooks/{id}/deliveries', ['200', ...EVERY_CALL, '404']],
  ])('documents every status of %s %s, errors with the Error schema, behind bearer auth', (method, path, statuses) => {
    const operation = served.paths[path][method];
    expect(Object.keys(operation.responses).sort()).toEqual([...statuses].sort());
    for (const status of statuses.filter((s) => Number(s) >= 400)) {
      expect(operation.responses[status].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    }
    expect(operation.security).toEqual([{ bearer: [] }]);
  });

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

  it('documents the rate limit headers of a 429', () => {
    for (const [path, method] of [
      ['/plants', 'get'],
      ['/plants', 'post'],
      ['/plants/{id}', 'delete'],
    ]) {
      expect(Object.keys(served.paths[path][method].responses['429'].headers).sort()).toEqual([
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
      ]);
    }
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

  it.each([
    ['/plants', '200'],
    ['/webhooks', '201'],
  ])('documents Idempotency-Key on POST %s, its 409 in progress, 422 and the replay header', (path, success) => {
    const create = served.paths[path].post;
    const key = create.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    expect(key).toMatchObject({ in: 'header', required: false, schema: { minLength: 1, maxLength: 255 } });
    expect(create.responses['409'].description).toMatch(/Idempotency-Key is still in progress/);
    expect(create.responses['422'].description).toMatch(/Idempotency-Key was already used/);
    expect(create.responses[success].headers['Idempotent-Replayed']).toBeDefined();
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
