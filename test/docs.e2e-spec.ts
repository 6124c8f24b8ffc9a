import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { HttpMetrics } from '../src/metrics/http.metrics';
import { expectCleanError, listenOnLoopback, rawRequest } from './utils/raw-http';
import { TestApp, startTestApp } from './utils/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SWAGGER_UI_DIST = dirname(
  require.resolve('swagger-ui-dist/package.json', { paths: [dirname(require.resolve('@nestjs/swagger'))] }),
);

/**
 * The API documentation (Swagger UI and the OpenAPI document) is served by the service itself, like
 * any route: request id, log line, metrics and rate limit, and only the files the page needs.
 * The browser test (swagger-ui.e2e-spec.ts) shows the page works under the CSP.
 */
describe('API documentation', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '1000' });
    port = await listenOnLoopback(t.app);
  });
  afterAll(() => t.close());

  /** The files the page itself links to, as the browser would fetch them. */
  async function linkedFiles(): Promise<string[]> {
    const page = await t.http().get('/docs');
    return [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  }

  it('serves the page, its script and the Swagger UI files it links to, nothing from elsewhere', async () => {
    const page = await t.http().get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const files = await linkedFiles();
    expect(files.sort()).toEqual(
      [
        '/docs/favicon-16x16.png',
        '/docs/favicon-32x32.png',
        '/docs/lossless-json.js',
        '/docs/swagger-ui-bundle.js',
        '/docs/swagger-ui-init.js',
        '/docs/swagger-ui.css',
      ].sort(),
    );
    for (const file of files) {
      const res = await t.http().get(file).buffer(true);
      expect({ file, status: res.status }).toEqual({ file, status: 200 });
    }
    const bundle = await t
      .http()
      .get('/docs/swagger-ui-bundle.js')
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.headers['cache-control']).toBe('public, max-age=86400');
    expect((bundle.body as Buffer).equals(readFileSync(join(SWAGGER_UI_DIST, 'swagger-ui-bundle.js')))).toBe(true);
    expect((await t.http().get('/docs/swagger-ui.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await t.http().get('/docs/favicon-32x32.png')).headers['content-type']).toBe('image/png');
    const lossless = await t.http().get('/docs/lossless-json.js');
    expect(lossless.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(lossless.text).toBe(readFileSync(require.resolve('lossless-json'), 'utf8'));
  });

  it("starts Swagger UI on the service's own document, never on a URL from the address bar", async () => {
    const init = await t.http().get('/docs/swagger-ui-init.js');
    expect(init.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(init.text).toContain("url: '/docs-json'");
    expect(init.text).not.toMatch(/location/);
  });

  it('serves the OpenAPI document at /docs-json, as committed in openapi.json', async () => {
    const res = await t.http().get('/docs-json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8')));
  });

  it.each([
    '/docs/package.json',
    '/docs/README.md',
    '/docs/LICENSE',
    '/docs/swagger-ui-bundle.js.map',
    '/docs/swagger-ui.js.map',
    '/docs/swagger-ui.css.map',
    '/docs/swagger-initializer.js',
    '/docs/index.html',
    '/docs/index.js',
    '/docs/oauth2-redirect.html',
    '/docs/absolute-path.js',
    '/docs/swagger-ui-standalone-preset.js',
    '/docs/lossless-json.js.map',
    '/docs/lossless-json.mjs',
    '/docs/%2e%2e%2fpackage.json',
    '/docs/..%2F..%2Fpackage.json',
    '/docs/constructor',
    '/docs/__proto__',
    '/docs/hasOwnProperty',
    '/docs-yaml',
  ])('answers %s with 404 and the Error body', async (path) => {
    expectCleanError(await rawRequest(port, { path }), [404]);
  });

  it('goes through the same middleware as the API: request id, metrics and rate limit', async () => {
    const metrics = t.app.get(HttpMetrics);
    const counted = async (route: string) =>
      (await metrics.requestDuration.get()).values.find(
        (v) =>
          v.metricName === 'http_request_duration_seconds_count' &&
          v.labels.route === route &&
          v.labels.status === '200',
      )?.value ?? 0;
    const before = {
      page: await counted('/docs'),
      file: await counted('/docs/{file}'),
      json: await counted('/docs-json'),
    };
    for (const path of ['/docs', '/docs/swagger-ui.css', '/docs-json']) {
      const res = await t
        .http()
        .get(path)
        .set('X-Request-Id', `docs-trace${path.replace(/\//g, '-')}`);
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe(`docs-trace${path.replace(/\//g, '-')}`);
      expect(res.headers['ratelimit']).toMatch(/^"default";r=\d+;t=\d+$/);
      expect((await t.http().get(path)).headers['x-request-id']).toMatch(UUID);
    }
    expect(await counted('/docs')).toBe(before.page + 2);
    expect(await counted('/docs/{file}')).toBe(before.file + 2);
    expect(await counted('/docs-json')).toBe(before.json + 2);
  });
});
