import { INestApplication, NestApplicationOptions } from '@nestjs/common';
import { CorsOptions, CorsOptionsCallback } from '@nestjs/common/interfaces/external/cors-options.interface';
import { ConfigService } from '@nestjs/config';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, ResponseObject, SwaggerModule } from '@nestjs/swagger';
import type { Express, Request } from 'express';
import helmet from 'helmet';
import { IncomingMessage, Server, ServerResponse } from 'node:http';
import { documentedPathMatcher } from './common/http/documented-paths';
import { ServiceExpressAdapter } from './common/http/express-adapter';
import { answerHttpLayerErrors } from './common/http/http-layer-errors';
import { writeJsonExactly } from './common/json/exact-json';
import { closeWhenBodyUnread } from './common/json/json-body';
import { RATE_LIMIT_FIELDS } from './common/openapi/api-errors.decorator';
import { AppConfig } from './config/configuration';
import { DocsService } from './docs/docs.service';
import { MetricsService } from './metrics/metrics.service';
import { isRateLimited } from './rate-limit/rate-limit.middleware';
import {
  WEBHOOK_DELIVERY_DESCRIPTION,
  WEBHOOK_EVENT_SCHEMAS,
  webhookEventOperations,
} from './webhooks/dto/webhook-event.dto';

/**
 * Options and set-up shared by main.ts, the e2e tests and the OpenAPI export, so what is tested
 * and documented is what runs.
 */
export const APP_OPTIONS: NestApplicationOptions = {
  // Bodies are read after the guards, by the routes that take one (TakesJsonBody), keeping int64 exact.
  bodyParser: false,
};

export { DOCS_PATH } from './docs/docs.service';

export function createHttpAdapter(): ExpressAdapter {
  return new ServiceExpressAdapter();
}

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

/** Headers a browser client may read from a cross-origin response. */
const EXPOSED_HEADERS = [
  'Link',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'X-Request-Id',
  'WWW-Authenticate',
  'Idempotent-Replayed',
];

export function configureApp(app: NestExpressApplication): void {
  const config = app.get(ConfigService<AppConfig, true>);
  const http = config.get('http', { infer: true });
  const oidc = config.get('oidc', { infer: true });

  writeJsonExactly(app);
  closeWhenBodyUnread((app.getHttpAdapter().getInstance() as Express).response);
  // `Expect: 100-continue` is answered by the body reader when it wants the body, so a request
  // refused first (limits, authentication, a declared length over the cap) never gets it.
  const server = app.getHttpServer() as Server;
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  const metrics = app.get(MetricsService);
  answerHttpLayerErrors(server, (status, method) => metrics.countRefusedByHttpLayer(status, method));
  app.disable('x-powered-by');
  // Client addresses (rate limits, logs) come from X-Forwarded-For only through the proxies listed here.
  app.set('trust proxy', http.trustProxy);
  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          // Swagger UI loads its own scripts and styles from /docs and draws icons as data: images.
          'default-src': ["'self'"],
          'script-src': ["'self'"],
          'style-src': ["'self'", "'unsafe-inline'"],
          'img-src': ["'self'", 'data:'],
          // Swagger UI's Authorize fetches a token from the identity provider.
          'connect-src': ["'self'", ...(oidc ? [new URL(oidc.issuer).origin] : [])],
          'frame-ancestors': ["'none'"],
          'form-action': ["'self'"],
          // TLS is usually ended at the load balancer; upgrading would break plain-HTTP docs pages.
          'upgrade-insecure-requests': null,
        },
      },
    }),
  );
  const document = buildOpenApiDocument(app);
  if (http.corsOrigins) {
    const cors: CorsOptions = {
      origin: http.corsOrigins === '*' ? '*' : http.corsOrigins,
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key'],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    };
    // Preflights are answered for the API's own routes only; an OPTIONS elsewhere goes on to the
    // router (and the rate limit) like any request, and gets its 404.
    const isApiPath = documentedPathMatcher(Object.keys(document.paths));
    app.enableCors((req: Request, callback: CorsOptionsCallback) =>
      callback(null, req.method === 'OPTIONS' && !isApiPath(req.path) ? { origin: false } : cors),
    );
  }
  // Served by DocsModule, through the same middleware, guards and filter as the API.
  app.get(DocsService).publish(document);
}
