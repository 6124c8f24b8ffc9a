import { INestApplication, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/configuration';
import { ShutdownState } from './shutdown-state';

export const EXIT_CLEAN = 0;
/** In-flight requests outlived SHUTDOWN_TIMEOUT_MS and were cut. */
export const EXIT_FORCED = 1;

/**
 * Stops an instance without losing work:
 * 1. readiness turns 503, and for SHUTDOWN_DELAY_MS the instance still serves, so a load balancer
 *    that only learns from readiness probes has time to stop sending traffic here;
 * 2. the listener closes and in-flight requests finish (at most SHUTDOWN_TIMEOUT_MS);
 * 3. only then are the modules closed (metrics listener, Redis, database), so no request loses its
 *    database halfway and every answered write is committed.
 */
export async function shutDown(app: INestApplication, reason: string): Promise<number> {
  const logger = new Logger('Shutdown');
  const { delayMs, timeoutMs } = app.get(ConfigService<AppConfig, true>).get('shutdown', { infer: true });
  app.get(ShutdownState).begin();
  logger.log(`${reason}: readiness is now 503; closing in ${delayMs} ms, then finishing in-flight requests (at most ${timeoutMs} ms)`);
  if (delayMs > 0) await sleep(delayMs);

  const server = app.getHttpServer() as Server;
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
  return drained ? EXIT_CLEAN : EXIT_FORCED;
}

/** SIGTERM (orchestrators) and SIGINT (Ctrl-C) both shut down gracefully, once. */
export function exitGracefullyOnSignals(app: INestApplication): void {
  let started = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (started) return;
      started = true;
      shutDown(app, signal).then(
        (code) => process.exit(code),
        (error: unknown) => {
          new Logger('Shutdown').error(`Shutdown failed: ${(error as Error)?.stack ?? String(error)}`);
          process.exit(EXIT_FORCED);
        },
      );
    });
  }
}
