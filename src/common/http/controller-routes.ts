import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';

/** A route a controller of the application declares, as Nest mounts it. */
export interface ControllerRoute {
  method: RequestMethod;
  /** As Express matches it, parameters included: `/plants/:id`. */
  path: string;
  controller: Type;
  /** The method Nest calls for it: the route's decorators put their metadata on it. */
  handler: (...args: never[]) => unknown;
  /** `PlantsController.create`, for a reader. */
  name: string;
}

/**
 * Every route of every controller the application registers, found as Nest's router finds them
 * (a handler with a path; a controller's or a handler's paths may be a list, none is the root),
 * whether or not the OpenAPI document shows it: for what must hold of each route, checked by the
 * mechanism that needs it or by a test that enumerates them.
 */
export function controllerRoutes(discovery: DiscoveryService, scanner: MetadataScanner): ControllerRoute[] {
  return discovery.getControllers().flatMap(({ metatype, instance }) => {
    if (!metatype || !instance) return [];
    const prototype = Object.getPrototypeOf(instance) as Record<string, (...args: never[]) => unknown>;
    const controllerPaths = pathsOf(metatype);
    return scanner.getAllMethodNames(prototype).flatMap((name) => {
      const handler = prototype[name];
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) return [];
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
      return controllerPaths.flatMap((base) =>
        pathsOf(handler).map((path) => ({
          method,
          path: joined(base, path),
          controller: metatype as Type,
          handler,
          name: `${metatype.name}.${name}`,
        })),
      );
    });
  });
}

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
