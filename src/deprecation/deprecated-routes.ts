import { Injectable, MiddlewareConsumer, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { DEPRECATION_KEY, DeprecationFields, DeprecationNotice, deprecationFields } from './deprecated.decorator';

export interface DeprecatedRoute {
  /** As `forRoutes` takes it. */
  route: { path: string; method: RequestMethod };
  fields: DeprecationFields;
}

/**
 * The routes of @Deprecated() handlers, found once at start-up. Each gets a middleware of its own
 * that sets its fields, so a route that is not deprecated runs no code for it, and none at all is
 * mounted while nothing is deprecated.
 */
@Injectable()
export class DeprecatedRoutes {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  find(): DeprecatedRoute[] {
    return this.discovery.getControllers().flatMap(({ metatype, instance }) => {
      if (!metatype || !instance) return [];
      const prototype = Object.getPrototypeOf(instance) as Record<string, (...args: unknown[]) => unknown>;
      const controllerPaths = pathsOf(metatype);
      return this.scanner.getAllMethodNames(prototype).flatMap((name) => {
        const handler = prototype[name];
        const notice = this.reflector.get<DeprecationNotice | undefined, string>(DEPRECATION_KEY, handler);
        if (!notice) return [];
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
        const fields = deprecationFields(notice);
        return controllerPaths.flatMap((base) =>
          pathsOf(handler).map((path) => ({ route: { path: joined(base, path), method }, fields })),
        );
      });
    });
  }

  /**
   * Mounts the fields on each deprecated route. Called by AppModule before the request log and the
   * rate limit, so that a 429 and a 401 of the route carry them too.
   */
  apply(consumer: MiddlewareConsumer): void {
    for (const { route, fields } of this.find()) consumer.apply(withFields(fields)).forRoutes(route);
  }
}

function withFields(fields: DeprecationFields) {
  const entries = Object.entries(fields);
  return (_req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of entries) res.setHeader(name, value);
    next();
  };
}

/** A controller's or a handler's paths (Nest takes one or a list; none is the root). */
function pathsOf(target: object): string[] {
  const paths = Reflect.getMetadata(PATH_METADATA, target) as string | string[] | undefined;
  return paths === undefined ? ['/'] : ([] as string[]).concat(paths);
}

function joined(base: string, path: string): string {
  return `/${[base, path]
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
}
