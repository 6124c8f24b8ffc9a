import { INestApplication, INestApplicationContext, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/configuration';
import { LogOutput } from '../logging/log-output';
import { stopTracing } from '../tracing/tracing';
import { ShutdownState } from './shutdown-state';

export const EXIT_CLEAN = 0;
/** In-flight requests outlived SHUTDOWN_TIMEOUT_MS and were cut, or the shutdown itself overran. */
export const EXIT_FORCED = 1;
/** The instance never served: its start failed, or a signal came while it was starting. */
export const EXIT_NOT_STARTED = 1;

/**
 * Past SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS, what the shutdown may still take to close the
 * modules and write its last log lines before the process exits regardless.
 */
export const EXIT_MARGIN_MS = 2000;
/** At most this long is spent writing the last buffered log lines before exit. */
export const LOG_FLUSH_MS = 1000;

/**
 * Stops an instance without losing work:
 * 1. readiness turns 503, and for SHUTDOWN_DELAY_MS the instance still serves, so a load balancer
 *    that only learns from readiness probes has time to stop sending traffic here;
 * 2. the listener closes and in-flight requests finish (at most SHUTDOWN_TIMEOUT_MS);
 * 3. only then are the modules closed (webhook attempts in flight finish, then the metrics
 *    listener, Redis, database), so no request loses its database halfway and every answered
 *    write is committed;
 * 4. the spans still waiting are handed to the collector along with the last log lines.
 * A worker (no listener, no load balancer) goes straight to 3.
 */
export async function shutDown(app: INestApplicationContext, reason: string): Promise<number> {
  const logger = new Logger('Shutdown');
  const { delayMs, timeoutMs } = app.get(ConfigService<AppConfig, true>).get('shutdown', { infer: true });
  app.get(ShutdownState).begin();
  const server = 'getHttpServer' in app ? ((app as INestApplication).getHttpServer() as Server) : undefined;
  if (!server) {
    logger.log(`${reason}: finishing what is in flight (at most ${timeoutMs} ms)`);
    await app.close();
    logger.log('Stopped');
    await app.get(LogOutput).close(LOG_FLUSH_MS);
    return EXIT_CLEAN;
  }
  logger.log(
    `${reason}: readiness is now 503; closing in ${delayMs} ms, then finishing in-flight requests (at most ${timeoutMs} ms)`,
  );
  if (delayMs > 0) await sleep(delayMs);

  const drained = await new Promise<boolean>((resolve) => {
    // Keep-alive connections become idle as their last response ends; close each as soon as it is.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => {
      clearInterval(sweep);
      server.closeAllConnections();
      resolve(false);
    }, timeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve(true);
    });
    server.closeIdleConnections();
  });
  if (!drained) logger.error(`Requests still running after ${timeoutMs} ms were cut`);

  await app.close();
  logger.log('Stopped');
  // The last spans and the last log lines go out together, each within its own bound.
  await Promise.all([stopTracing(), app.get(LogOutput).close(LOG_FLUSH_MS)]);
  return drained ? EXIT_CLEAN : EXIT_FORCED;
}

/** Ends a process whose instance never served, once its last log lines are written (at most LOG_FLUSH_MS). */
export async function exitNotStarted(logOutput: LogOutput): Promise<never> {
  await logOutput.close(LOG_FLUSH_MS);
  return process.exit(EXIT_NOT_STARTED);
}

/**
 * SIGTERM (orchestrators) and SIGINT (Ctrl-C), handled from the moment the process starts, once.
 * While the instance is starting (waiting for its database, migrating) there is nothing to finish:
 * it says it is stopping and exits with EXIT_NOT_STARTED at once. From `serving(app)` on, it shuts
 * down gracefully (shutDown), and the process exits by SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS +
 * EXIT_MARGIN_MS whatever else is stuck (a module that does not close, a stdout nobody reads).
 */
export function exitOnSignals(logOutput: LogOutput): { serving: (app: INestApplicationContext) => void } {
  let app: INestApplicationContext | undefined;
  let started = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (started) return;
      started = true;
      if (!app) {
        new Logger('Shutdown').log(`${signal} while starting: stopping before serving`);
        void exitNotStarted(logOutput);
        return;
      }
      const serving = app;
      const { delayMs, timeoutMs } = serving.get(ConfigService<AppConfig, true>).get('shutdown', { infer: true });
      const limitMs = delayMs + timeoutMs + EXIT_MARGIN_MS;
      setTimeout(() => {
        new Logger('Shutdown').error(`Shutdown did not finish within ${limitMs} ms; exiting now`);
        logOutput.abandon();
        process.exit(EXIT_FORCED);
      }, limitMs).unref();
      shutDown(serving, signal).then(
        (code) => process.exit(code),
        async (error: unknown) => {
          new Logger('Shutdown').error(`Shutdown failed: ${(error as Error)?.stack ?? String(error)}`);
          await logOutput.close(LOG_FLUSH_MS);
          process.exit(EXIT_FORCED);
        },
      );
    });
  }
  return {
    serving: (served) => {
      app = served;
    },
  };
}
