import { Controller, Get, INestApplication, Module, Query, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Express, Request } from 'express';
import { IncomingMessage, Server, ServerResponse } from 'node:http';
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
    const app = await NestFactory.create(SampleModule, new ExpressAdapterWithStableShapes(), { logger: false, ...options });
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
});
