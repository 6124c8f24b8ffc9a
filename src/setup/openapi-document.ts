import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, ResponseObject, SwaggerModule } from '@nestjs/swagger';
import { RATE_LIMIT_FIELDS } from '../common/openapi/api-errors.decorator';
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
        "(the client's own, if it sent one of 1 to 128 visible ASCII characters), which the service logs.",
    )
    .setVersion('1.0.0')
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
    extraModels: WEBHOOK_EVENT_SCHEMAS,
  });
  return withWebhookEvents(withRateLimitFields(document));
}

/** The events, in the `x-webhooks` extension (see webhookEventOperations). */
function withWebhookEvents(document: OpenAPIObject): OpenAPIObject {
  return { ...document, 'x-webhooks': webhookEventOperations() } as OpenAPIObject;
}

/** Every answer of a limited operation carries the RateLimit fields, successes and errors alike. */
function withRateLimitFields(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RATE_LIMIT_FIELDS } };
  const references = Object.fromEntries(
    Object.keys(RATE_LIMIT_FIELDS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const) {
      const operation = item[method];
      if (!operation || !isRateLimited(method.toUpperCase(), path)) continue;
      for (const response of Object.values(operation.responses) as ResponseObject[]) {
        response.headers = { ...response.headers, ...references };
      }
    }
  }
  return document;
}
