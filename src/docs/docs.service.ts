import { Injectable } from '@nestjs/common';
import { OpenAPIObject } from '@nestjs/swagger';
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

/**
 * What /docs serves: the OpenAPI document (published once the app is configured), the page, its
 * script and the allow-listed Swagger UI assets, read once and kept in memory (about 1.8 MB).
 */
@Injectable()
export class DocsService {
  private document?: DocsFile;
  private readonly files = new Map<string, DocsFile>([
    ['', { type: 'text/html; charset=utf-8', body: Buffer.from(PAGE) }],
    ['swagger-ui-init.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(INIT_SCRIPT) }],
  ]);
  private assetsDirectory?: string;

  publish(document: OpenAPIObject): void {
    this.document = { type: 'application/json; charset=utf-8', body: Buffer.from(JSON.stringify(document)) };
  }

  /** The JSON document, once published. */
  openApiDocument(): DocsFile | undefined {
    return this.document;
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
