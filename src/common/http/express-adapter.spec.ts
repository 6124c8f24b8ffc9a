import { Controller, Get, INestApplication, Module, Query, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Express, Request } from 'express';
import { execFileSync } from 'node:child_process';
import { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import request from 'supertest';
import { ExpressAdapterWithStableShapes } from './express-adapter';

@Controller()
class SampleController {
  @Get('echo')
  echo(@Query('q') q: string, @Req() req: Request): unknown {
    return { q, path: req.path, protocol: req.protocol, hasApp: req.app !== undefined };
  }
}

@Module({ controllers: [SampleController] })
class SampleModule {}

/** The prototypes of the request and response as the server first hands them out. */
async function prototypesAtArrival(app: INestApplication): Promise<{ req: object; res: object }> {
  const server = app.getHttpServer() as Server;
  const seen = new Promise<{ req: object; res: object }>((resolve) =>
    server.prependOnceListener('request', (req: IncomingMessage, res: ServerResponse) =>
      resolve({ req: Object.getPrototypeOf(req) as object, res: Object.getPrototypeOf(res) as object }),
    ),
  );
  await request(server).get('/echo?q=1').expect(200);
  return seen;
}

describe(ExpressAdapterWithStableShapes.name, () => {
  const apps: INestApplication[] = [];
  async function start(options: { forceCloseConnections?: boolean } = {}): Promise<INestApplication> {
    const app = await NestFactory.create(SampleModule, new ExpressAdapterWithStableShapes(), {
      logger: false,
      ...options,
    });
    apps.push(app);
    await app.init();
    return app;
  }
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it("creates requests and responses with the app's Express prototypes, before Express sees them", async () => {
    const app = await start();
    const express = app.getHttpAdapter().getInstance() as Express;
    const { req, res } = await prototypesAtArrival(app);
    expect(req).toBe(express.request);
    expect(res).toBe(express.response);
  });

  it('serves requests as Express does: query, path, request helpers, JSON', async () => {
    const app = await start();
    const res = await request(app.getHttpServer()).get('/echo?q=plants');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ q: 'plants', path: '/echo', protocol: 'http', hasApp: true });
  });

  it("keeps Nest's own server for options it does not cover", async () => {
    const app = await start({ forceCloseConnections: true });
    const { req } = await prototypesAtArrival(app);
    expect(req).toBe(IncomingMessage.prototype);
  });

  /**
   * What the adapter is for, asked of V8 itself in a child process (natives syntax): requests and
   * responses that went through the same code share one hidden class, with fast properties. The
   * same script on Nest's own adapter shows the problem it solves.
   */
  it("gives requests and responses shared hidden classes with fast properties, where Nest's own adapter does not", () => {
    const shapesWith = (adapterClass: string, modulePath: string) => {
      const script = `
        const { ${adapterClass} } = require(${JSON.stringify(modulePath)});
        const adapter = new ${adapterClass}();
        const app = adapter.getInstance();
        const seen = [];
        app.use((req, res, next) => { req.id = 'request'; res.locals.answered = true; next(); });
        app.get('/plants', (req, res) => { req.user = { subject: 'alice' }; seen.push([req, res]); res.end('ok'); });
        adapter.initHttpServer({});
        const server = adapter.getHttpServer();
        server.listen(0, '127.0.0.1', async () => {
          for (let i = 0; i < 20; i++) await fetch('http://127.0.0.1:' + server.address().port + '/plants').then((r) => r.text());
          const [[req1, res1], [req2, res2]] = seen.slice(-2);
          console.log(JSON.stringify({
            sharedRequestShape: %HaveSameMap(req1, req2), sharedResponseShape: %HaveSameMap(res1, res2),
            fastRequest: %HasFastProperties(req1), fastResponse: %HasFastProperties(res1),
          }));
          server.close();
        });`;
      const out = execFileSync(
        process.execPath,
        ['--allow-natives-syntax', '-r', 'ts-node/register/transpile-only', '-e', script],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      return JSON.parse(out.trim().split('\n').pop() as string) as Record<string, boolean>;
    };

    expect(shapesWith('ExpressAdapterWithStableShapes', join(__dirname, 'express-adapter'))).toEqual({
      sharedRequestShape: true,
      sharedResponseShape: true,
      fastRequest: true,
      fastResponse: true,
    });
    expect(shapesWith('ExpressAdapter', require.resolve('@nestjs/platform-express'))).toMatchObject({
      sharedRequestShape: false,
      sharedResponseShape: false,
    });
  }, 120_000);
});
