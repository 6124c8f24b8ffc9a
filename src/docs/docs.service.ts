import { Injectable, Optional } from '@nestjs/common';
import { OpenAPIObject } from '@nestjs/swagger';
import { JwtVerifier } from '../auth/oidc/jwt-verifier';
import { SCOPES } from '../auth/scopes';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const DOCS_PATH = 'docs';
export const DOCS_JSON_PATH = `${DOCS_PATH}-json`;

export interface DocsFile {
  type: string;
  body: Buffer;
}

/**
 * The only swagger-ui-dist files the page loads; everything else in the package (its
 * package.json, README, source maps, the stock Petstore initializer) is never served.
 */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
]);

/** The page: Swagger UI's own markup, loading only files of this origin (the CSP allows no inline script). */
const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>Plant Store API</title>
  <link rel="stylesheet" type="text/css" href="/${DOCS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="/${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/${DOCS_PATH}/favicon-16x16.png" sizes="16x16">
  <style>body { margin: 0; background: #fafafa; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="/${DOCS_PATH}/swagger-ui-init.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on the service's own document. No URL is taken from the page's address (the
 * stock initializer's `?url=` would load any document into this origin's page), and the base
 * layout has no top bar to type one into.
 */
const INIT_SCRIPT = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/${DOCS_JSON_PATH}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

const jsonFile = (document: OpenAPIObject): DocsFile => ({
  type: 'application/json; charset=utf-8',
  body: Buffer.from(JSON.stringify(document)),
});

export const OAUTH2_SCHEME = 'oauth2';

/**
 * The document with an OAuth 2.0 client-credentials scheme beside the bearer one, offered by every
 * operation that takes a bearer token, so Swagger UI's Authorize can fetch a token from the provider.
 */
export function withClientCredentials(document: OpenAPIObject, tokenUrl: string): OpenAPIObject {
  const copy = JSON.parse(JSON.stringify(document)) as OpenAPIObject;
  copy.components = {
    ...copy.components,
    securitySchemes: {
      ...copy.components?.securitySchemes,
      [OAUTH2_SCHEME]: {
        type: 'oauth2',
        description: "An access token of the organisation's identity provider, for a client id and secret",
        flows: {
          clientCredentials: {
            tokenUrl,
            scopes: { ...SCOPES },
          },
        },
      },
    },
  };
  for (const item of Object.values(copy.paths)) {
    for (const operation of Object.values(item) as { security?: Record<string, string[]>[] }[]) {
      if (operation?.security?.some((requirement) => 'bearer' in requirement)) {
        operation.security.push({ [OAUTH2_SCHEME]: [] });
      }
    }
  }
  return copy;
}

/**
 * What /docs serves: the OpenAPI document (published once the app is configured), the page, its
 * script and the allow-listed Swagger UI assets, read once and kept in memory (about 1.8 MB).
 */
@Injectable()
export class DocsService {
  private document?: OpenAPIObject;
  private plain?: DocsFile;
  /** The document with the OAuth2 scheme, once the provider's token endpoint is known. */
  private withOAuth2?: DocsFile;
  private readonly files = new Map<string, DocsFile>([
    ['', { type: 'text/html; charset=utf-8', body: Buffer.from(PAGE) }],
    ['swagger-ui-init.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(INIT_SCRIPT) }],
  ]);
  private assetsDirectory?: string;

  constructor(@Optional() private readonly jwts?: JwtVerifier) {}

  publish(document: OpenAPIObject): void {
    this.document = document;
    this.plain = jsonFile(document);
    this.withOAuth2 = undefined;
  }

  /**
   * The JSON document, once published. With OIDC_ISSUER set it also declares the provider's
   * client-credentials flow; while the provider's token endpoint cannot be had, it is served
   * without it (and asked for again on the next request).
   */
  async openApiDocument(): Promise<DocsFile | undefined> {
    if (this.withOAuth2 || !this.document || !this.jwts) return this.withOAuth2 ?? this.plain;
    const tokenUrl = await this.jwts.tokenEndpoint();
    if (tokenUrl === undefined) return this.plain;
    this.withOAuth2 ??= jsonFile(withClientCredentials(this.document, tokenUrl));
    return this.withOAuth2;
  }

  /** The page (`''`) or one of its files, by name; undefined for anything not on the list. */
  file(name: string): DocsFile | undefined {
    let file = this.files.get(name);
    const type = ASSETS.get(name);
    if (file === undefined && type !== undefined) {
      file = { type, body: readFileSync(join(this.assets(), name)) };
      this.files.set(name, file);
    }
    return file;
  }

  /** swagger-ui-dist as @nestjs/swagger, which depends on it, resolves it. */
  private assets(): string {
    this.assetsDirectory ??= dirname(
      require.resolve('swagger-ui-dist/package.json', { paths: [dirname(require.resolve('@nestjs/swagger'))] }),
    );
    return this.assetsDirectory;
  }
}
