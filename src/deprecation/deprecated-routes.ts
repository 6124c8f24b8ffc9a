import { Injectable, MiddlewareConsumer, RequestMethod } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { controllerRoutes } from '../common/http/controller-routes';
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
    return controllerRoutes(this.discovery, this.scanner).flatMap(({ method, path, handler }) => {
      const notice = this.reflector.get<DeprecationNotice | undefined, string>(DEPRECATION_KEY, handler);
      return notice ? [{ route: { path, method }, fields: deprecationFields(notice) }] : [];
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
