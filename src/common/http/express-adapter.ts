import { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Express } from 'express';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import { serialisingUnsafePipelines } from './pipelined-requests';

type Constructor = abstract new (...args: never[]) => object;
type ErrorHandler = (err: unknown, req: unknown, res: unknown, next: unknown) => unknown;

/**
 * Said instead of Express's message for a path it cannot percent-decode, which quotes the path
 * segment (and Nest answers it as is): a segment that may be a pasted token is not sent back.
 */
export const UNDECODABLE_PATH_MESSAGE = 'The path is not valid percent-encoding';

/**
 * A constructor that builds objects as `base` does but gives them `prototype` from the start.
 * Node's IncomingMessage and ServerResponse are plain constructor functions, meant to be extended.
 */
function constructingWith<T extends Constructor>(base: T, prototype: object): T {
  const construct = base as unknown as (this: object, ...args: unknown[]) => void;
  function Constructed(this: object, ...args: unknown[]): void {
    construct.apply(this, args);
  }
  Constructed.prototype = prototype;
  // As a class that extends `base` would: V8 sizes the objects a constructor makes from the
  // properties its constructor chain assigns, and without this link it would count none, give
  // them no room for fields and keep their properties in a slow dictionary.
  Object.setPrototypeOf(Constructed, base);
  return Constructed as unknown as T;
}

/**
 * Nest's Express adapter, except that the HTTP server creates every request and response with the
 * app's own Express prototypes (`app.request`, `app.response`).
 *
 * Express gives them those prototypes itself at the start of every request, with
 * `Object.setPrototypeOf`. V8 cannot share the hidden class of an object whose prototype was
 * swapped: every property added to it afterwards (Express, Nest, Passport and the service add some
 * twenty per request) builds a new hidden class, and every property read of the request or the
 * response misses its inline cache, in every layer of the stack. Created with the right prototypes,
 * requests and responses keep shared hidden classes, and Express's swap, finding the prototype
 * already in place, changes nothing. Behaviour is the same; the cost per request falls
 * (bench/RESULTS.md).
 *
 * Pipelined requests on one connection run one at a time while one of them is unsafe
 * (pipelined-requests.ts).
 */
export class ExpressAdapterWithStableShapes extends ExpressAdapter {
  override setErrorHandler(handler: ErrorHandler, prefix?: string): unknown {
    // Express tells an error handler by its four parameters.
    return super.setErrorHandler((err: unknown, req: unknown, res: unknown, next: unknown) => {
      if (err instanceof URIError && (err as URIError & { status?: number }).status === 400)
        err.message = UNDECODABLE_PATH_MESSAGE;
      return handler(err, req, res, next);
    }, prefix);
  }

  override initHttpServer(options: NestApplicationOptions): void {
    // TLS is ended in front of the service; those options keep Nest's own server.
    if (options?.httpsOptions || options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      {
        IncomingMessage: constructingWith<typeof IncomingMessage>(IncomingMessage, app.request),
        ServerResponse: constructingWith<typeof ServerResponse>(ServerResponse, app.response),
      },
      serialisingUnsafePipelines(app),
    );
  }
}
