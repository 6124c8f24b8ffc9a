import { INestApplication } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocumentBuilder, OpenAPIObject, OperationObject, ResponseObject, SwaggerModule } from '@nestjs/swagger';
import {
  AuthenticationRequired,
  DuplicateAuthorization,
  InvalidToken,
  MissingScope,
  SigningKeysUnavailable,
} from '../auth/auth.errors';
import { DatabaseUnavailable, InternalError } from '../common/filters/server.errors';
import { HTTP_LAYER_REFUSALS } from '../common/http/http-layer-errors';
import { UndecodablePath } from '../common/http/http.errors';
import { RATE_LIMIT_FIELDS, addErrorResponses } from '../common/openapi/api-errors.decorator';
import { ErrorDoc } from '../common/openapi/error-doc';
import { ErrorDto } from '../common/openapi/error.dto';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/idempotency-key';
import { REPLAYED_RESPONSE_HEADERS } from '../idempotency/idempotent.decorator';
import { operationsOf } from '../common/openapi/operations';
import { withDeprecations } from '../deprecation/deprecation-document';
import { REQUEST_ID_MAX_LENGTH } from '../logging/logging.limits';
import { TooManyRequests } from '../rate-limit/rate-limit.errors';
import { isRateLimited } from '../rate-limit/rate-limit.middleware';
import {
  WEBHOOK_DELIVERY_DESCRIPTION,
  WEBHOOK_EVENT_SCHEMAS,
  webhookEventOperations,
} from '../webhooks/dto/webhook-event.dto';

/**
 * The OpenAPI document of the API, from the controllers' decorators: the one DocsModule serves and
 * `npm run openapi` writes to openapi.json.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Plant Store')
    .setDescription(
      'Create, list and delete plants over HTTP with JSON. Every call needs a bearer token ' +
        '(`Authorization: Bearer pst_...`), issued with the `plantstore token create` command. ' +
        "Plants belong to the token's user; ids are chosen by the client, unique per user, and are " +
        'exact signed 64-bit integers. Every error is `{ "error": <status>, "message": "..." }`.\n\n' +
        'Each user (or, without a token this instance already knows as valid, each client address) may ' +
        'send a limited number of requests per minute. The limit comes before routing and ' +
        "authentication: every response but the health probes' carries the `RateLimit-Policy` and " +
        '`RateLimit` headers, unknown paths and the documentation included, and any call may be ' +
        'refused with 429 and `Retry-After`. Every response carries `X-Request-Id` ' +
        `(the client's own, if it sent one of 1 to ${REQUEST_ID_MAX_LENGTH} visible ASCII characters with nothing shaped like ` +
        'a token), which the service logs.',
    )
    .setVersion(contractVersion())
    .setLicense('MIT', 'https://opensource.org/license/mit')
    // Relative: the instance that serves this document (docs/api.md, "Servers").
    .addServer('/', 'The Plant Store instance that serves this document')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque (pst_...)',
        description: 'A token from `plantstore token create`',
      },
      'bearer',
    )
    .addTag('plants', 'The plants of the calling user')
    .addTag('webhooks', WEBHOOK_DELIVERY_DESCRIPTION)
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ErrorDto, ...WEBHOOK_EVENT_SCHEMAS],
  });
  withErrors(document, ANSWERED_BY_THE_SERVICE);
  withReplayedHeader(document);
  withRateLimitFields(document);
  // Before Node's refusals, which come before the fields are set, like the RateLimit fields.
  withDeprecations(document);
  // After the RateLimit fields: Node's HTTP layer answers these before the limit counts the request.
  withErrors(document, [{ errors: HTTP_LAYER_REFUSALS, reaches: () => true }]);
  return withWebhookEvents(document);
}

/**
 * The contract's version is the service's: `version` in package.json, the one place it is written,
 * moved with `npm version` (docs/development.md, "Releasing"). package.json is two folders up from
 * this file in src/setup/ and in dist/setup/ alike, and ships in the image beside dist/.
 */
function contractVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/** Failures that reach some operations whatever their routes declare, and which ones. */
export interface ErrorRule {
  errors: readonly ErrorDoc[];
  reaches: (method: string, path: string, operation: OperationObject) => boolean;
}

/** Whether the global bearer guard checks a token on this operation (public ones declare `security: []`). */
const needsToken = (operation: OperationObject) =>
  (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);

/**
 * What the service's own layers refuse, before or beside a route's handler: the exception filter
 * (an unexpected failure), the rate limit, the bearer guard (whose token lookup reads the
 * database), and the router (a path parameter it cannot percent-decode). A route declares only its
 * own failures; test/documented-refusals.e2e-spec.ts sends each of these to every operation.
 */
export const ANSWERED_BY_THE_SERVICE: readonly ErrorRule[] = [
  { errors: [InternalError.doc], reaches: () => true },
  { errors: [TooManyRequests.doc], reaches: (method, path) => isRateLimited(method, path) },
  {
    errors: [
      DuplicateAuthorization.doc,
      AuthenticationRequired.doc,
      InvalidToken.doc,
      MissingScope.doc,
      DatabaseUnavailable.doc,
      SigningKeysUnavailable.doc,
    ],
    reaches: (_method, _path, operation) => needsToken(operation),
  },
  {
    errors: [UndecodablePath.doc],
    reaches: (_method, _path, operation) =>
      (operation.parameters ?? []).some((parameter) => 'in' in parameter && parameter.in === 'path'),
  },
];

function withErrors(document: OpenAPIObject, rules: readonly ErrorRule[]): void {
  for (const { method, path, operation } of operationsOf(document)) {
    for (const { errors, reaches } of rules) if (reaches(method, path, operation)) addErrorResponses(operation, errors);
  }
}

/** The success answer of every operation that takes `Idempotency-Key` (@Idempotent()) may be a replay. */
function withReplayedHeader(document: OpenAPIObject): void {
  for (const { operation } of operationsOf(document)) {
    const idempotent = (operation.parameters ?? []).some(
      (parameter) => 'in' in parameter && parameter.in === 'header' && parameter.name === IDEMPOTENCY_KEY_HEADER,
    );
    if (!idempotent) continue;
    for (const [status, response] of Object.entries(operation.responses) as [string, ResponseObject][]) {
      if (status.startsWith('2')) response.headers = { ...response.headers, ...REPLAYED_RESPONSE_HEADERS };
    }
  }
}

/** The events, in the `x-webhooks` extension (see webhookEventOperations). */
function withWebhookEvents(document: OpenAPIObject): OpenAPIObject {
  return { ...document, 'x-webhooks': webhookEventOperations() } as OpenAPIObject;
}

/** Every answer of a limited operation carries the RateLimit fields, successes and errors alike. */
function withRateLimitFields(document: OpenAPIObject): void {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RATE_LIMIT_FIELDS } };
  const references = Object.fromEntries(
    Object.keys(RATE_LIMIT_FIELDS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
  for (const { method, path, operation } of operationsOf(document)) {
    if (!isRateLimited(method, path)) continue;
    for (const response of Object.values(operation.responses) as ResponseObject[]) {
      response.headers = { ...response.headers, ...references };
    }
  }
}
