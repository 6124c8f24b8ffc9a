import { INestApplication, NestApplicationOptions } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { IssuedToken, TokensService } from './auth/tokens.service';
import { AppConfig } from './config/configuration';

/**
 * Options and set-up shared by main.ts, the e2e tests and the OpenAPI export, so what is tested
 * and documented is what runs.
 */
export const APP_OPTIONS: NestApplicationOptions = {
  // Bodies are read by JsonBodyMiddleware, which keeps int64 values exact.
  bodyParser: false,
};

export const DOCS_PATH = 'docs';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Plant Store')
    .setDescription(
      'Create, list and delete plants over HTTP with JSON. Every call needs a bearer token ' +
        '(`Authorization: Bearer pst_...`), issued with the `plantstore token create` command. ' +
        'Plants belong to the token\'s user; ids are chosen by the client, unique per user, and are ' +
        'exact signed 64-bit integers. Every error is `{ "error": <status>, "message": "..." }`.',
    )
    .setVersion('1.0.0')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'opaque (pst_...)', description: 'A token from `plantstore token create`' },
      'bearer',
    )
    .build();
  return SwaggerModule.createDocument(app, config);
}

export function configureApp(app: NestExpressApplication): void {
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  SwaggerModule.setup(DOCS_PATH, app, buildOpenApiDocument(app), {
    jsonDocumentUrl: `${DOCS_PATH}-json`,
    swaggerOptions: { persistAuthorization: true },
  });
}

/**
 * A newcomer on a fresh machine gets a token to try the API with at once: only outside production,
 * only on the embedded database (never on a shared MySQL), and only while it holds no token at all.
 */
export async function issueFirstRunToken(app: INestApplication): Promise<IssuedToken | null> {
  const config = app.get(ConfigService<AppConfig, true>);
  if (config.get('env', { infer: true }) === 'production') return null;
  if (config.get('database.type', { infer: true }) !== 'sqlite') return null;
  return app.get(TokensService).createFirstRunToken();
}
