import { DocsService } from './docs.service';

describe(DocsService.name, () => {
  const docs = new DocsService();

  it('has no document until one is published, then serves it as JSON', () => {
    const fresh = new DocsService();
    expect(fresh.openApiDocument()).toBeUndefined();
    fresh.publish({ openapi: '3.0.0', info: { title: 'Plant Store', version: '1.0.0' }, paths: {} });
    const published = fresh.openApiDocument();
    expect(published?.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(published!.body.toString())).toMatchObject({ openapi: '3.0.0' });
  });

  it('serves the page, linking only files on its list, and a start script that loads /docs-json', () => {
    const page = docs.file('')!.body.toString();
    for (const [, link] of page.matchAll(/(?:src|href)="\/docs\/([^"]+)"/g)) expect(docs.file(link)).toBeDefined();
    expect(docs.file('swagger-ui-init.js')!.body.toString()).toContain("url: '/docs-json'");
  });

  it.each(['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-16x16.png', 'favicon-32x32.png'])(
    'serves %s from swagger-ui-dist',
    (name) => {
      expect(docs.file(name)!.body.length).toBeGreaterThan(100);
    },
  );

  it.each([
    'package.json',
    'README.md',
    'swagger-ui-bundle.js.map',
    'swagger-initializer.js',
    'index.html',
    '../package.json',
    'constructor',
    '__proto__',
    'toString',
  ])('serves nothing for %s', (name) => {
    expect(docs.file(name)).toBeUndefined();
  });
});
