import { Request } from 'express';

/** Express route paths as templates; the app has a handful of routes, each written once. */
const templates = new Map<string, string>();
const MAX_TEMPLATES = 1000;

/**
 * The route a request matched, as the OpenAPI document writes it (`/plants/{id}`), never the raw
 * path: logs group by it and metrics label by it without one series per id. Undefined when no
 * route matched (unknown paths, and bodies refused before routing).
 */
export function routeTemplate(req: Request): string | undefined {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  // A middleware mounted as a wildcard route (`/{*path}`) sets that route until a handler's route
  // matches; a request that got no further than it matched no route of the API.
  if (typeof path !== 'string' || path.includes('*')) return undefined;
  let template = templates.get(path);
  if (template === undefined) {
    template = path.replace(/:(\w+)/g, '{$1}');
    if (templates.size < MAX_TEMPLATES) templates.set(path, template);
  }
  return template;
}
