import { OpenAPIObject } from '@nestjs/swagger';
import { JwtVerifier } from '../auth/oidc/jwt-verifier';
import { DocsService, OAUTH2_SCHEME } from './docs.service';

describe(DocsService.name, () => {
  const docs = new DocsService();

  it('has no document until one is published, then serves it as JSON', async () => {
    const fresh = new DocsService();
    await expect(fresh.openApiDocument()).resolves.toBeUndefined();
    fresh.publish({ openapi: '3.0.0', info: { title: 'Plant Store', version: '1.0.0' }, paths: {} });
    const published = await fresh.openApiDocument();
    expect(published?.type).toBe('application/json; charset=utf-8');
    expect(JSON.parse(published!.body.toString())).toMatchObject({ openapi: '3.0.0' });
  });

  describe('with an identity provider', () => {
    const DOCUMENT: OpenAPIObject = {
      openapi: '3.0.0',
      info: { title: 'Plant Store', version: '1.0.0' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      paths: {
        '/plants': { get: { security: [{ bearer: [] }], responses: {} } },
        '/health/live': { get: { responses: {} } },
      },
    };
    const withProvider = (tokenEndpoint: jest.Mock) => new DocsService({ tokenEndpoint } as unknown as JwtVerifier);

    it("adds the provider's client-credentials flow to every operation that takes a bearer token", async () => {
      const tokenEndpoint = jest.fn().mockResolvedValue('https://id.example.com/token');
      const service = withProvider(tokenEndpoint);
      service.publish(DOCUMENT);
      const served = JSON.parse((await service.openApiDocument())!.body.toString()) as OpenAPIObject;
      expect(served.components?.securitySchemes?.[OAUTH2_SCHEME]).toMatchObject({
        type: 'oauth2',
        flows: { clientCredentials: { tokenUrl: 'https://id.example.com/token' } },
      });
      expect(served.paths['/plants'].get?.security).toEqual([{ bearer: [] }, { [OAUTH2_SCHEME]: [] }]);
      expect(served.paths['/health/live'].get?.security).toBeUndefined();
      // Built once, and the published document is left as it was.
      await service.openApiDocument();
      expect(tokenEndpoint).toHaveBeenCalledTimes(1);
      expect(DOCUMENT.paths['/plants'].get?.security).toEqual([{ bearer: [] }]);
    });

    it('serves the document without it while the token endpoint cannot be had, and asks again', async () => {
      const tokenEndpoint = jest.fn().mockResolvedValue(undefined);
      const service = withProvider(tokenEndpoint);
      service.publish(DOCUMENT);
      expect(JSON.parse((await service.openApiDocument())!.body.toString())).toEqual(DOCUMENT);
      tokenEndpoint.mockResolvedValue('https://id.example.com/token');
      expect((await service.openApiDocument())!.body.toString()).toContain(OAUTH2_SCHEME);
    });
  });

  it('serves the page, linking only files on its list, and a start script that loads /docs-json', () => {
    const page = docs.file('')!.body.toString();
    for (const [, link] of page.matchAll(/(?:src|href)="\/docs\/([^"]+)"/g)) expect(docs.file(link)).toBeDefined();
    expect(docs.file('swagger-ui-init.js')!.body.toString()).toContain("url: '/docs-json'");
  });

  it.each(['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-16x16.png', 'favicon-32x32.png', 'lossless-json.js'])(
    'serves %s from its package',
    (name) => {
      expect(docs.file(name)!.body.length).toBeGreaterThan(100);
    },
  );

  it.each([
    'package.json',
    'README.md',
    'swagger-ui-bundle.js.map',
    'lossless-json.js.map',
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
