import { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Express } from 'express';
import { RequestListener } from 'node:http';
import { UndecodablePath } from './http.errors';
import { serialisingUnsafePipelines } from './pipelined-requests';

type ErrorHandler = (err: unknown, req: unknown, res: unknown, next: unknown) => unknown;

/**
 * Nest's Express adapter with two changes, each for correctness:
 * - a path Express cannot percent-decode is answered without quoting it (UndecodablePath): Express's
 *   message quotes the path segment, and Nest would answer it as is, sending back a segment that
 *   may be a pasted token;
 * - pipelined requests on one connection run one at a time while one of them is unsafe
 *   (pipelined-requests.ts), whatever server Nest builds for the options given (HTTPS,
 *   forceCloseConnections, return503OnClosing).
 *
 * `outermost` wraps the server's handler of every request, so it sees each request as it arrives,
 * before a pipelined one waits for its turn (tracing's server spans).
 */
export class ServiceExpressAdapter extends ExpressAdapter {
  constructor(private readonly outermost: (handler: RequestListener) => RequestListener = (handler) => handler) {
    super();
  }

  override setErrorHandler(handler: ErrorHandler, prefix?: string): unknown {
    // Express tells an error handler by its four parameters.
    return super.setErrorHandler((err: unknown, req: unknown, res: unknown, next: unknown) => {
      const undecodable = err instanceof URIError && (err as URIError & { status?: number }).status === 400;
      return handler(undecodable ? new UndecodablePath() : err, req, res, next);
    }, prefix);
  }

  override initHttpServer(options: NestApplicationOptions): void {
    super.initHttpServer(options);
    // Nest's server hands every request to the Express app, its only 'request' listener.
    const app = this.getInstance<Express>();
    this.httpServer.removeListener('request', app);
    this.httpServer.on('request', this.outermost(serialisingUnsafePipelines(app)));
  }
}
