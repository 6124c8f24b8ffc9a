import { INestApplication, RequestMethod } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IS_PUBLIC_KEY } from '../../src/auth/decorators/public.decorator';
import { controllerRoutes } from '../../src/common/http/controller-routes';
import { isIdempotent } from '../../src/idempotency/idempotent.decorator';

/** A route of the started application, read from its controllers as Nest's router mounts them. */
export interface AppRoute {
  /** `POST` */
  method: string;
  /** As the OpenAPI document writes it: `/plants/{id}`. */
  path: string;
  /** `POST /plants/{id}` */
  label: string;
  /** `PlantsController.create`: where to look. */
  handler: string;
  /** Left out of the OpenAPI document (`@ApiExcludeEndpoint()`, `@ApiExcludeController()`). */
  hidden: boolean;
  /** `@Public()`: no token needed. */
  isPublic: boolean;
  /** `@Idempotent()` */
  idempotent: boolean;
}

/**
 * The metadata @ApiExcludeEndpoint() and @ApiExcludeController() set (@nestjs/swagger does not
 * export its keys; test/openapi.e2e-spec.ts fails on a hidden route if they change).
 */
const EXCLUDED_ENDPOINT = 'swagger/apiExcludeEndpoint';
const EXCLUDED_CONTROLLER = 'swagger/apiExcludeController';

/** The methods of a route that changes something, which @Idempotent() makes safe to retry. */
export const UNSAFE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'ALL'];

/**
 * Every route of every controller `app` registers, hidden ones included: what a spec that must hold
 * of each route goes through, so that a new route is held to it without a list to extend.
 */
export function appRoutes(app: INestApplication): AppRoute[] {
  const reflector = app.get(Reflector);
  const routes = controllerRoutes(app.get(DiscoveryService), app.get(MetadataScanner));
  return routes.map(({ method, path, controller, handler, name }) => {
    const template = path.replace(/:(\w+)/g, '{$1}');
    const excluded = Reflect.getMetadata(EXCLUDED_ENDPOINT, handler) as { disable?: boolean } | undefined;
    const excludedController = Reflect.getMetadata(EXCLUDED_CONTROLLER, controller) as boolean[] | undefined;
    return {
      method: RequestMethod[method],
      path: template,
      label: `${RequestMethod[method]} ${template}`,
      handler: name,
      hidden: excluded?.disable === true || excludedController?.[0] === true,
      isPublic: reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, [handler, controller]) === true,
      idempotent: isIdempotent(handler),
    };
  });
}

/** The rule of @Idempotent(): the routes that break it, as `POST /path (Controller.handler)`. */
export function unsafeRoutesNotIdempotent(routes: AppRoute[]): string[] {
  return routes
    .filter((route) => UNSAFE_METHODS.includes(route.method) && !route.idempotent)
    .map((route) => `${route.label} (${route.handler})`);
}
