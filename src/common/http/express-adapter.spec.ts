import { Controller, Get, INestApplication, Module, Post, Query, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Express, Request } from 'express';
import { Server } from 'node:http';
import { AddressInfo, createConnection } from 'node:net';
import request from 'supertest';
import { ServiceExpressAdapter } from './express-adapter';
import { UndecodablePath } from './http.errors';

const order: string[] = [];

@Controller()
class SampleController {
  @Get('echo')
  echo(@Query('q') q: string, @Req() req: Request): unknown {
    return { q, path: req.path, protocol: req.protocol, hasApp: req.app !== undefined };
  }

  @Get('items/:name')
  item(@Req() req: Request): unknown {
    return { name: req.params.name };
  }

  /** Slow, so that a request pipelined behind it would overtake it unless held back. */
  @Post('slow')
  async slow(): Promise<unknown> {
    order.push('slow started');
    await new Promise((resolve) => setTimeout(resolve, 100));
    order.push('slow finished');
    return {};
  }

  @Get('fast')
  fast(): unknown {
    order.push('fast');
    return {};
  }
}

@Module({ controllers: [SampleController] })
class SampleModule {}

/** Sends raw bytes on one connection and resolves with everything the server wrote back. */
function rawExchange(server: Server, bytes: string, responses: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection((server.address() as AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.split('HTTP/1.1 ').length - 1 >= responses) {
        socket.end();
        resolve(received);
      }
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe(ServiceExpressAdapter.name, () => {
  const apps: INestApplication[] = [];
  async function start(options: { forceCloseConnections?: boolean } = {}): Promise<INestApplication> {
    const app = await NestFactory.create(SampleModule, new ServiceExpressAdapter(), { logger: false, ...options });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return app;
  }
  afterAll(() => Promise.all(apps.map((app) => app.close())));
  beforeEach(() => order.splice(0));

  it('serves requests as Express does: query, path, request helpers, JSON', async () => {
    const app = await start();
    const res = await request(app.getHttpServer()).get('/echo?q=plants');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ q: 'plants', path: '/echo', protocol: 'http', hasApp: true });
  });

  it('answers a path it cannot percent-decode with 400, without quoting the path', async () => {
    const app = await start();
    const res = await request(app.getHttpServer()).get('/items/pst_secret%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.text).toContain(new UndecodablePath().message);
    expect(res.text).not.toContain('pst_secret');
  });

  it.each([{}, { forceCloseConnections: true }])(
    'runs a request pipelined behind an unsafe one after it (options %p)',
    async (options) => {
      const app = await start(options);
      const server = app.getHttpServer() as Server;
      // The Express app is no longer a listener of its own: every request goes through the queue.
      expect(server.listeners('request')).not.toContain(app.getHttpAdapter().getInstance() as Express);
      const out = await rawExchange(
        server,
        'POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n',
        2,
      );
      expect(out.match(/HTTP\/1\.1 20[01]/g)).toHaveLength(2);
      expect(order).toEqual(['slow started', 'slow finished', 'fast']);
    },
  );
});
