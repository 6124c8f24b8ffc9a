import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import express, { NextFunction, Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import request from 'supertest';
import { HttpMetricsMiddleware } from './http-metrics.middleware';
import { HttpMetrics } from './http.metrics';
import { MetricsService } from './metrics.service';

interface Series {
  labels: Record<string, string | number>;
  value: number;
}

describe(HttpMetricsMiddleware.name, () => {
  let metrics: HttpMetrics;
  let registry: Registry;
  let middleware: HttpMetricsMiddleware;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      providers: [
        HttpMetricsMiddleware,
        HttpMetrics,
        MetricsService,
        { provide: ConfigService, useValue: { get: () => undefined } },
      ],
    }).compile();
    metrics = moduleRef.get(HttpMetrics);
    registry = moduleRef.get(MetricsService).registry;
    middleware = moduleRef.get(HttpMetricsMiddleware);
  });

  /** The request counts of the histogram, by their labels. */
  async function counts(): Promise<Series[]> {
    const { values } = await metrics.requestDuration.get();
    return values
      .filter((v) => v.metricName === 'http_request_duration_seconds_count')
      .map(({ labels, value }) => ({ labels: labels as Series['labels'], value }));
  }

  /**
   * An Express app with the middleware in front, mounted as Nest mounts a middleware that AppModule
   * applies with forRoutes('/'): on the prefix of every path.
   */
  function app() {
    const server = express();
    server.use('/', (req: Request, res: Response, next: NextFunction) => middleware.use(req, res, next));
    server.post('/plants', (_req, res) => {
      res.status(200).json({ id: 1, name: 'x' });
    });
    server.get('/plants', (_req, res) => {
      res.status(200).json([]);
    });
    server.delete('/plants/:id', (req, res) => {
      if (req.params.id === '404') res.status(404).json({ error: 404, message: 'No plant' });
      else res.status(204).end();
    });
    server.use((_req: Request, res: Response) => {
      res.status(404).json({ error: 404, message: 'Not found' });
    });
    return server;
  }

  it('counts each request under its method, route template and status', async () => {
    const server = app();
    await request(server).post('/plants').send({});
    await request(server).get('/plants?limit=5');
    await request(server).get('/plants');
    await request(server).delete('/plants/123');
    await request(server).delete('/plants/456');
    await request(server).delete('/plants/404');
    expect(await counts()).toEqual(
      expect.arrayContaining([
        { labels: { method: 'POST', route: '/plants', status: '200' }, value: 1 },
        { labels: { method: 'GET', route: '/plants', status: '200' }, value: 2 },
        { labels: { method: 'DELETE', route: '/plants/{id}', status: '204' }, value: 2 },
        { labels: { method: 'DELETE', route: '/plants/{id}', status: '404' }, value: 1 },
      ]),
    );
    expect(await counts()).toHaveLength(4);
  });

  it('never labels by the raw path', async () => {
    const server = app();
    await request(server).delete('/plants/123');
    await request(server).get('/no/such/path/987');
    const text = await registry.metrics();
    // Only the labels matter: default metrics' values may contain any digits.
    const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    expect([...routes].sort()).toEqual(['/plants/{id}', 'unmatched']);
    expect(text).not.toContain('/plants/123');
    expect(text).not.toContain('/no/such');
  });

  it('counts a request no route matched as unmatched', async () => {
    const server = app();
    await request(server).get('/no/such/path/987');
    await request(server).put('/plants');
    expect(await counts()).toEqual([
      { labels: { method: 'GET', route: 'unmatched', status: '404' }, value: 1 },
      { labels: { method: 'PUT', route: 'unmatched', status: '404' }, value: 1 },
    ]);
  });

  it('times the request until its response is finished, and counts it once', () => {
    const res = new EventEmitter() as EventEmitter & { statusCode: number; req: unknown };
    res.statusCode = 200;
    const req = { method: 'GET', route: { path: '/plants' } };
    res.req = req;
    const next = jest.fn();
    const observe = jest.spyOn(metrics.requestDuration, 'observe');

    middleware.use(req as unknown as Request, res as unknown as Response, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(observe).not.toHaveBeenCalled();

    // The status and route are read when the answer is finished, not when the request arrives.
    res.statusCode = 503;
    res.emit('finish');
    res.emit('finish');
    expect(observe).toHaveBeenCalledTimes(1);
    expect(observe).toHaveBeenCalledWith({ method: 'GET', route: '/plants', status: '503' }, expect.any(Number));
  });

  it('records the duration in seconds', async () => {
    const server = express();
    server.use((req: Request, res: Response, next: NextFunction) => middleware.use(req, res, next));
    server.get('/slow', (_req, res) => {
      // A known duration for the histogram to record: the delay is what is measured.
      setTimeout(() => res.status(200).end(), 60);
    });
    await request(server).get('/slow');
    const { values } = await metrics.requestDuration.get();
    const sum = values.find((v) => v.metricName === 'http_request_duration_seconds_sum')?.value ?? 0;
    expect(sum).toBeGreaterThanOrEqual(0.05);
    expect(sum).toBeLessThan(5);
  });
});
