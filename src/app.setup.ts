import { ConfigService } from '@nestjs/config';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppConfig } from './config/configuration';
import { DOCS_PATH, DocsService } from './docs/docs.service';
import { setUpCors } from './setup/cors';
import { setUpHttpServer } from './setup/http-server';
import { setUpJsonBodies } from './setup/json-bodies';
import { buildOpenApiDocument } from './setup/openapi-document';
import { setUpSecurityHeaders } from './setup/security-headers';

// The set-up shared by main.ts, the e2e tests and the OpenAPI export, so what is tested and
// documented is what runs; each concern is set up by its own file in src/setup/.
export { APP_OPTIONS, createHttpAdapter } from './setup/http-server';
export { buildOpenApiDocument } from './setup/openapi-document';
export { DOCS_PATH };

/** The URL an instance listening on `host` (HOST; none or a wildcard for every address) and `port` answers at. */
export function listeningUrl(host: string | undefined, port: number): string {
  return `http://${host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost'}:${port}`;
}

/** The line an instance logs once it listens at `base`, its URL (the e2e tests wait for it). */
export function listeningMessage(base: string): string {
  return `Listening on ${base}; Swagger UI at ${base}/${DOCS_PATH}`;
}

/** In this order: Express runs middleware in the order it is added. */
export function configureApp(app: NestExpressApplication): void {
  const config = app.get(ConfigService<AppConfig, true>);
  const http = config.get('http', { infer: true });

  setUpJsonBodies(app);
  setUpHttpServer(app, http);
  setUpSecurityHeaders(app, config.get('oidc', { infer: true }));
  const document = buildOpenApiDocument(app);
  setUpCors(app, http.corsOrigins, document);
  // Served by DocsModule, through the same middleware, guards and filter as the API.
  app.get(DocsService).publish(document);
}
