import { Injectable, NestMiddleware, Type, mixin } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';

type Next = (error?: unknown) => void;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === 'function';

/**
 * Middleware classes run as one Express layer, in the order given. Nest mounts every middleware
 * class as a layer of its own and wraps each call in a promise and a per-request record (so that a
 * middleware runs once per request); for the few middleware that every request passes through in a
 * fixed order, that wrapping cost more than their own work (docs/performance.md). Each class is
 * still built by the injector (it must be a provider its module exports) and keeps its own `use`.
 *
 * A middleware either calls `next` before its `use` returns (or before the promise `use` returns
 * settles), or answers the request itself; an error it throws, rejects with or passes to `next`
 * ends the chain and goes to Nest's exception filter like any middleware error.
 */
export function inOneLayer(...types: Type<NestMiddleware>[]): Type<NestMiddleware> {
  @Injectable()
  class OneLayer implements NestMiddleware {
    private readonly chain: NestMiddleware[];

    constructor(...middleware: NestMiddleware[]) {
      this.chain = middleware;
    }

    use(req: IncomingMessage, res: ServerResponse, next: Next): unknown {
      return this.from(0, req, res, next);
    }

    private from(index: number, req: IncomingMessage, res: ServerResponse, next: Next): unknown {
      if (index === this.chain.length) return next();
      let passed = false;
      let failure: unknown;
      const result = this.chain[index].use(req, res, (error?: unknown) => {
        passed = true;
        failure = error;
      });
      const then = (): unknown => {
        if (failure !== undefined) throw failure;
        return passed ? this.from(index + 1, req, res, next) : undefined;
      };
      return isThenable(result) ? result.then(then) : then();
    }
  }
  // What the injector builds the class from: the middleware classes, as constructor parameters.
  Reflect.defineMetadata('design:paramtypes', types, OneLayer);
  const layer = mixin(OneLayer);
  // Named after its parts in Nest's logs (mixin gives it a random name).
  Object.defineProperty(layer, 'name', { value: types.map((type) => type.name).join('+') });
  return layer;
}
