import { NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import helmet, { HelmetOptions } from 'helmet';
import type { ServerResponse } from 'node:http';
import { AppConfig } from '../config/configuration';

/** Helmet's options: its defaults, with a content security policy that lets Swagger UI work. */
export function helmetOptions(oidc: AppConfig['oidc']): HelmetOptions {
  return {
    contentSecurityPolicy: {
      directives: {
        // Swagger UI loads its own scripts and styles from /docs and draws icons as data: images.
        'default-src': ["'self'"],
        'script-src': ["'self'"],
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:'],
        // Swagger UI's Authorize fetches a token from the identity provider.
        'connect-src': ["'self'", ...(oidc ? [new URL(oidc.issuer).origin] : [])],
        'frame-ancestors': ["'none'"],
        'form-action': ["'self'"],
        // TLS is usually ended at the load balancer; upgrading would break plain-HTTP docs pages.
        'upgrade-insecure-requests': null,
      },
    },
  };
}

/**
 * The headers helmet sets with `options`, as [name, value] pairs, found by running helmet itself
 * once on a response that records them. Every option here is static (no per-request nonce), so
 * helmet would set the same headers on every response.
 */
export function helmetHeaders(options: HelmetOptions): [string, string][] {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader: (name: string, value: string) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let passed = false;
  helmet(options)({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    passed = true;
  });
  if (!passed) throw new Error('helmet did not pass the request on synchronously');
  return headers;
}

/**
 * Helmet's headers on every response the app answers. Helmet runs a dozen middleware functions per
 * request to set headers that never change here; they are worked out once by helmet
 * (helmetHeaders) and set from that list as the response's head is written, not when the request
 * arrives: set early, they lived through the request's wait for the database and were copied by
 * every collection of young objects meanwhile (docs/performance.md). A header a route set itself is
 * left as it is.
 */
export function setUpSecurityHeaders(app: NestExpressApplication, oidc: AppConfig['oidc']): void {
  const headers = helmetHeaders(helmetOptions(oidc));
  // Looked up by their lower-case names, which Node then needs no new string for.
  const lowerCase = headers.map(([name]) => name.toLowerCase());
  const response = (app.getHttpAdapter().getInstance() as Express).response as unknown as Pick<
    ServerResponse,
    'writeHead'
  >;
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    for (let i = 0; i < headers.length; i++) if (!this.hasHeader(lowerCase[i])) this.setHeader(...headers[i]);
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
}
