import { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { AppConfig } from '../config/configuration';

/** Helmet's headers on every response, with a content security policy that lets Swagger UI work. */
export function setUpSecurityHeaders(app: NestExpressApplication, oidc: AppConfig['oidc']): void {
  app.use(
    helmet({
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
    }),
  );
}
