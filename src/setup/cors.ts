import { CorsOptions, CorsOptionsCallback } from '@nestjs/common/interfaces/external/cors-options.interface';
import { NestExpressApplication } from '@nestjs/platform-express';
import { OpenAPIObject } from '@nestjs/swagger';
import type { Request } from 'express';
import { documentedPathMatcher } from '../common/http/documented-paths';
import { AppConfig } from '../config/configuration';
import { deprecationFieldNames } from '../deprecation/deprecation-document';

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

/** Cross-origin calls from the browser origins of CORS_ORIGINS; none when it is unset. */
export function setUpCors(
  app: NestExpressApplication,
  corsOrigins: AppConfig['http']['corsOrigins'],
  document: OpenAPIObject,
): void {
  if (!corsOrigins) return;
  const cors: CorsOptions = {
    origin: corsOrigins === '*' ? '*' : corsOrigins,
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key'],
    exposedHeaders: [...EXPOSED_HEADERS, ...deprecationFieldNames(document)],
    maxAge: 600,
  };
  // Preflights are answered for the API's own routes only; an OPTIONS elsewhere goes on to the
  // router (and the rate limit) like any request, and gets its 404.
  const isApiPath = documentedPathMatcher(Object.keys(document.paths));
  app.enableCors((req: Request, callback: CorsOptionsCallback) =>
    callback(null, req.method === 'OPTIONS' && !isApiPath(req.path) ? { origin: false } : cors),
  );
}
