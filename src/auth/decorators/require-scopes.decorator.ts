import { SetMetadata } from '@nestjs/common';
import { ApiExtension, DECORATORS } from '@nestjs/swagger';
import { Scope } from '../scopes';

export const REQUIRED_SCOPES_KEY = 'requiredScopes';

/** The operation's scopes in the OpenAPI document, where tools (and the docs' tables) read them. */
export const SCOPES_EXTENSION = 'x-required-scopes';

/**
 * The scopes a token must carry for this route (or every route of a controller), checked by the
 * global bearer guard. On a route it also lists them in the operation's SCOPES_EXTENSION and ends
 * its OpenAPI description with them (a bearer requirement of OpenAPI 3.0 cannot carry scopes), so
 * it goes above the route's @ApiOperation (decorators apply from the bottom up); a route without
 * one is refused when the class is loaded, rather than documented without its scope.
 */
export function RequireScopes(...scopes: Scope[]): MethodDecorator & ClassDecorator {
  const requireScopes = SetMetadata(REQUIRED_SCOPES_KEY, scopes);
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key === undefined || descriptor === undefined) return requireScopes(target as () => unknown);
    const handler = descriptor.value as object;
    const operation = Reflect.getMetadata(DECORATORS.API_OPERATION, handler) as { description?: string } | undefined;
    if (operation === undefined) {
      throw new Error(`@RequireScopes on ${String(key)} must sit above its @ApiOperation, which it completes`);
    }
    const needs = `Needs the scope${scopes.length > 1 ? 's' : ''} ${scopes.join(', ')}.`;
    const description = [operation.description, needs].filter(Boolean).join(' ');
    Reflect.defineMetadata(DECORATORS.API_OPERATION, { ...operation, description }, handler);
    ApiExtension(SCOPES_EXTENSION, scopes)(target, key, descriptor);
    return requireScopes(target, key, descriptor);
  }) as MethodDecorator & ClassDecorator;
}
