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
 * The only files the page loads besides its own: four of swagger-ui-dist, and lossless-json's
 * browser build (a dependency of the service already), which shows JSON answers with their
 * numbers exact. Everything else in those packages (package.json, READMEs, source maps, the stock
 * Petstore initializer) is never served.
 */
const ASSETS: ReadonlyMap<string, { type: string; path: () => string }> = new Map([
  ['swagger-ui.css', { type: 'text/css; charset=utf-8', path: () => swaggerUiFile('swagger-ui.css') }],
  [
    'swagger-ui-bundle.js',
    { type: 'text/javascript; charset=utf-8', path: () => swaggerUiFile('swagger-ui-bundle.js') },
  ],
  ['favicon-32x32.png', { type: 'image/png', path: () => swaggerUiFile('favicon-32x32.png') }],
  ['favicon-16x16.png', { type: 'image/png', path: () => swaggerUiFile('favicon-16x16.png') }],
  // The package's `require` entry is its UMD build, which defines window.LosslessJSON in a page.
  ['lossless-json.js', { type: 'text/javascript; charset=utf-8', path: () => require.resolve('lossless-json') }],
]);

/** A file of swagger-ui-dist as @nestjs/swagger, which depends on it, resolves it. */
function swaggerUiFile(name: string): string {
  return join(
    dirname(require.resolve('swagger-ui-dist/package.json', { paths: [dirname(require.resolve('@nestjs/swagger'))] })),
    name,
  );
}

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
  <script src="/${DOCS_PATH}/lossless-json.js"></script>
  <script src="/${DOCS_PATH}/swagger-ui-init.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on the service's own document. No URL is taken from the page's address (the
 * stock initializer's `?url=` would load any document into this origin's page), and the base
 * layout has no top bar to type one into.
 *
 * Ids are int64, and Swagger UI shows a JSON answer after JSON.parse and JSON.stringify, which
 * round every integer beyond 2^53: plant 9007199254740993 would show as 9007199254740992, and a
 * user who copied it would delete the wrong id. Its response body is shown as lossless-json
 * formats it instead, every number as the service wrote it, indented as Swagger UI indents. A
 * request body is sent as typed (Swagger UI passes the text on; the browser test holds it to that).
 */
const INIT_SCRIPT = `function exactJson(content, contentType) {
  if (typeof content !== 'string' || !/json/i.test(contentType || '')) return undefined;
  try {
    return LosslessJSON.stringify(LosslessJSON.parse(content), null, 2);
  } catch (error) {
    return undefined; // Not JSON after all: Swagger UI says so itself.
  }
}

function ExactNumbersPlugin() {
  return {
    wrapComponents: {
      responseBody: function (Original, system) {
        return function ExactResponseBody(props) {
          var h = system.React.createElement;
          var text = exactJson(props.content, props.contentType);
          if (text === undefined) return h(Original, props);
          var HighlightCode = props.getComponent('HighlightCode', true);
          var file = 'response_' + Date.now() + '.json';
          return h('div', null, h('h5', null, 'Response body'),
            h(HighlightCode, { language: 'json', downloadable: true, canCopy: true, fileName: file }, text));
        };
      },
    },
  };
}

window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/${DOCS_JSON_PATH}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [ExactNumbersPlugin],
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
    const asset = ASSETS.get(name);
    if (file === undefined && asset !== undefined) {
      file = { type: asset.type, body: readFileSync(asset.path()) };
      this.files.set(name, file);
    }
    return file;
  }
}
