import { Request } from 'express';

/**
 * The route a request matched, as the OpenAPI document writes it (`/plants/{id}`), never the raw
 * path: logs group by it and metrics label by it without one series per id. Undefined when no
 * route matched (unknown paths, and bodies refused before routing).
 */
export function routeTemplate(req: Request): string | undefined {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  // Middleware applied to every path is mounted as the wildcard route `/{*path}`; a request that
  // got no further than it matched no route of the API.
  if (typeof path !== 'string' || path.includes('*')) return undefined;
  return path.replace(/:(\w+)/g, '{$1}');
}
