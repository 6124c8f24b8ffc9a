import { Controller, Get } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ResponseObject,
} from '@nestjs/swagger';
import { buildOpenApiDocument } from '../src/app.setup';
import { RequireScopes } from '../src/auth/decorators/require-scopes.decorator';
import { Deprecated } from '../src/deprecation/deprecated.decorator';
import { TestApp, bearer, startTestApp } from './utils/test-app';

/** A route of this test's own, so the mechanism is held whatever the API deprecates. */
@ApiBearerAuth('bearer')
@Controller('deprecated-example')
class DeprecatedExampleController {
  @Get()
  @RequireScopes('plants:read')
  @Deprecated({ since: '2026-12-01', sunset: '2027-06-30', link: 'https://example.com/deprecations/example' })
  @ApiOperation({ operationId: 'deprecatedExample', summary: 'An operation on its way out' })
  @ApiOkResponse({ description: 'Still answered' })
  read(): { answered: boolean } {
    return { answered: true };
  }
}

const ORIGIN = 'https://app.example.com';
const COMMITTED = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8')) as OpenAPIObject;

/** The operations a document marks deprecated, as `method path`. */
const deprecatedIn = (document: OpenAPIObject): string[] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => (operation as OperationObject).deprecated)
      .map(([method]) => `${method} ${path}`),
  );
const FIELDS = {
  deprecation: '@1796083200',
  sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
  link: '<https://example.com/deprecations/example>; rel="deprecation"',
};

describe('A deprecated operation', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    // Two requests a minute, so that the route's 429 can be seen.
    t = await startTestApp(
      'sqlite',
      { RATE_LIMIT_PER_MINUTE: '2', CORS_ORIGINS: ORIGIN },
      { testControllers: [DeprecatedExampleController] },
    );
    await t.reset();
    token = await t.token({ subject: 'deprecation', scopes: ['plants:read'] });
  });
  afterAll(() => t.close());

  it('says so on every answer, refusals included, and only there', async () => {
    // A token this instance does not know yet counts against the address and its user alike.
    const answered = await t.http().get('/deprecated-example').set(bearer(token)).set('Origin', ORIGIN).expect(200);
    expect(answered.body).toEqual({ answered: true });
    expect(answered.headers).toMatchObject(FIELDS);
    // A browser application on another origin may read them.
    expect(answered.headers['access-control-expose-headers']).toMatch(/\bDeprecation\b.*\bSunset\b/);

    // Another route, with the token now known (its user's second request).
    const other = await t.http().get('/plants').set(bearer(token)).expect(200);
    expect(other.headers).not.toHaveProperty('deprecation');
    expect(other.headers).not.toHaveProperty('sunset');

    // Without a token, against the address: its second request, then one over the limit.
    expect((await t.http().get('/deprecated-example').expect(401)).headers).toMatchObject(FIELDS);
    expect((await t.http().get('/deprecated-example').expect(429)).headers).toMatchObject(FIELDS);
  });

  it('is marked deprecated in the OpenAPI document, with the fields of its answers', () => {
    const document = buildOpenApiDocument(t.app as NestExpressApplication);
    const operation = document.paths['/deprecated-example'].get as OperationObject;
    expect(operation.deprecated).toBe(true);
    expect(operation.description).toMatch(/\*\*Deprecated\*\* from 2026-12-01; it may stop answering from 2027-06-30/);
    const responses = operation.responses as Record<string, ResponseObject>;
    for (const status of ['200', '401', '403', '429', '500']) {
      const headers = responses[status].headers as Record<string, HeaderObject>;
      expect(headers.Deprecation.schema).toEqual({ type: 'string', enum: [FIELDS.deprecation] });
      expect(headers.Sunset.schema).toEqual({ type: 'string', enum: [FIELDS.sunset] });
      expect(headers.Link.description).toContain(FIELDS.link);
    }
    // Node's HTTP layer answers these before any route is known.
    expect(responses['431'].headers ?? {}).not.toHaveProperty('Deprecation');

    // The test's route adds itself to what the API's own routes deprecate (openapi.json), and marks no other.
    expect(deprecatedIn(document).sort()).toEqual([...deprecatedIn(COMMITTED), 'get /deprecated-example'].sort());
  });
});
