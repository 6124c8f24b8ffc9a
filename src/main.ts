import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { APP_OPTIONS, DOCS_PATH, configureApp, issueFirstRunToken } from './app.setup';
import { AppConfig } from './config/configuration';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, APP_OPTIONS);
  configureApp(app);
  const config = app.get(ConfigService<AppConfig, true>);
  const port = config.get('port', { infer: true });
  const host = config.get('host', { infer: true });
  await (host ? app.listen(port, host) : app.listen(port));

  const base = `http://${host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost'}:${port}`;
  Logger.log(`Listening on ${base}; Swagger UI at ${base}/${DOCS_PATH}`, 'Bootstrap');

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
