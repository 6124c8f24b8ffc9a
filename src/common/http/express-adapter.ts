import { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Express } from 'express';
import { serialisingUnsafePipelines } from './pipelined-requests';

type ErrorHandler = (err: unknown, req: unknown, res: unknown, next: unknown) => unknown;

/**
 * Said instead of Express's message for a path it cannot percent-decode, which quotes the path
 * segment (and Nest answers it as is): a segment that may be a pasted token is not sent back.
 */
export const UNDECODABLE_PATH_MESSAGE = 'The path is not valid percent-encoding';

/**
 * Nest's Express adapter with two changes, each for correctness:
 * - a path Express cannot percent-decode is answered without quoting it (UNDECODABLE_PATH_MESSAGE);
 * - pipelined requests on one connection run one at a time while one of them is unsafe
 *   (pipelined-requests.ts), whatever server Nest builds for the options given (HTTPS,
 *   forceCloseConnections, return503OnClosing).
 */
export class ServiceExpressAdapter extends ExpressAdapter {
  override setErrorHandler(handler: ErrorHandler, prefix?: string): unknown {
    // Express tells an error handler by its four parameters.
    return super.setErrorHandler((err: unknown, req: unknown, res: unknown, next: unknown) => {
      if (err instanceof URIError && (err as URIError & { status?: number }).status === 400)
        err.message = UNDECODABLE_PATH_MESSAGE;
      return handler(err, req, res, next);
    }, prefix);
  }

  override initHttpServer(options: NestApplicationOptions): void {
    super.initHttpServer(options);
    // Nest's server hands every request to the Express app, its only 'request' listener.
    const app = this.getInstance<Express>();
    this.httpServer.removeListener('request', app);
    this.httpServer.on('request', serialisingUnsafePipelines(app));
  }
}
