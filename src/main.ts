import './tracing/start';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AddressInfo } from 'node:net';
import { AppModule } from './app.module';
import { APP_OPTIONS, DOCS_PATH, configureApp, createHttpAdapter } from './app.setup';
import { issueFirstRunToken } from './auth/first-run-token';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from './config/configuration';
import { exitGracefullyOnSignals } from './lifecycle/shutdown';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, createHttpAdapter(), {
    ...APP_OPTIONS,
    bufferLogs: true,
  });
  const logger = app.get(Logger);
  app.useLogger(logger);
  configureApp(app);
  exitGracefullyOnSignals(app);

  const config = app.get(ConfigService<AppConfig, true>);
  const host = config.get('host', { infer: true });
  await (host
    ? app.listen(config.get('port', { infer: true }), host)
    : app.listen(config.get('port', { infer: true })));

  const { port } = app.getHttpServer().address() as AddressInfo;
  const base = `http://${host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost'}:${port}`;
  logger.log(`Listening on ${base}; Swagger UI at ${base}/${DOCS_PATH}`, 'Bootstrap');

  // Printed to the console once, never through the logger.
  const issued = await issueFirstRunToken(app);
  if (issued) {
    process.stdout.write(
      `\nDevelopment token for user "${issued.token.subject}" (created because the database had none):\n` +
        `  ${issued.secret}\n` +
        `Try it: curl -H "Authorization: Bearer ${issued.secret}" ${base}/plants\n` +
        `Or open ${base}/${DOCS_PATH}, press Authorize and paste the token.\n\n`,
    );
  }
}

void bootstrap();
