import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { processEnvironment } from './config/config.module';
import { AppConfig, loadLogConfig } from './config/configuration';
import { exitNotStarted, exitOnSignals } from './lifecycle/shutdown';
import { LogOutput } from './logging/log-output';
import { nestLogger } from './logging/nest-logger';
import { MetricsService } from './metrics/metrics.service';
import { SecretsService } from './secrets/secrets.service';
import { WorkerModule } from './worker.module';

/** Why a worker refuses to start: it would deliver nothing. */
export const WORKER_NEEDS_KEY =
  'plantstore worker delivers webhooks and needs WEBHOOK_SECRET_KEY, the same as the API instances have';
export const WORKER_NEEDS_DELIVERY =
  'plantstore worker only delivers webhooks: unset WEBHOOK_DELIVERY (or set it to true)';

/**
 * Runs a webhook worker until SIGTERM or SIGINT, which finish the attempts in flight (at most
 * SHUTDOWN_TIMEOUT_MS) and exit. It starts, logs and waits for its database as the API does, from
 * the same settings. Resolves only if the worker did not start, with the process's exit code; once
 * it runs, the signal handlers end the process.
 */
export async function runWorker(): Promise<number> {
  const logOutput = new LogOutput(loadLogConfig(await processEnvironment()));
  const logger = nestLogger(logOutput);
  const signals = exitOnSignals(logOutput);
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(logOutput), {
    logger,
    abortOnError: false,
  }).catch(() => exitNotStarted(logOutput));
  const log = new Logger('Worker');
  const refusal = !app.get(SecretsService).configured
    ? WORKER_NEEDS_KEY
    : !app.get(ConfigService<AppConfig, true>).get('webhooks.deliver', { infer: true })
      ? WORKER_NEEDS_DELIVERY
      : undefined;
  if (refusal) {
    log.error(refusal);
    await app.close();
    return exitNotStarted(logOutput);
  }
  signals.serving(app);
  log.log(`Delivering webhook events; Prometheus metrics on port ${app.get(MetricsService).port}`);
  return new Promise<number>(() => undefined);
}
