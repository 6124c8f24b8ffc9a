import './tracing/start';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AddressInfo } from 'node:net';
import { AppModule } from './app.module';
import { APP_OPTIONS, DOCS_PATH, configureApp, createHttpAdapter, listeningMessage, listeningUrl } from './app.setup';
import { issueFirstRunToken } from './auth/first-run-token';
import { ConfigService } from '@nestjs/config';
import { processEnvironment } from './config/config.module';
import { AppConfig, loadLogConfig } from './config/configuration';
import { exitNotStarted, exitOnSignals } from './lifecycle/shutdown';
import { LogOutput } from './logging/log-output';
import { nestLogger } from './logging/nest-logger';

async function bootstrap(): Promise<void> {
  // The log before Nest: from the first line on, every line is in the configured format and written
  // as it happens, while the instance waits for its database too.
  const logOutput = new LogOutput(loadLogConfig(await processEnvironment()));
  const logger = nestLogger(logOutput);
  const signals = exitOnSignals(logOutput);

  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(logOutput), createHttpAdapter(), {
    ...APP_OPTIONS,
    logger,
    // A start that fails (a wrong setting, no database within DB_STARTUP_TIMEOUT) rejects, once Nest
    // has logged why, rather than aborting the process with its lines unwritten.
    abortOnError: false,
  }).catch(() => exitNotStarted(logOutput));
  try {
    configureApp(app);
    signals.serving(app);
    const config = app.get(ConfigService<AppConfig, true>);
    const host = config.get('host', { infer: true });
    await (host
      ? app.listen(config.get('port', { infer: true }), host)
      : app.listen(config.get('port', { infer: true })));

    const { port } = app.getHttpServer().address() as AddressInfo;
    const base = listeningUrl(host, port);
    logger.log(listeningMessage(base), 'Bootstrap');

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
  } catch (error) {
    logger.error(error, 'Bootstrap');
    await exitNotStarted(logOutput);
  }
}

void bootstrap();
