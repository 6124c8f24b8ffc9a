/**
 * Reference peer: the Express peer's routes (express-app.ts) with the middleware an Express team
 * adds before it ships, each in the configuration its documentation shows:
 *
 * - pino-http: a JSON line per request at `info` on stdout, with a request id (a valid incoming
 *   X-Request-Id, else a random UUID) echoed in the X-Request-Id response header;
 * - helmet() with its defaults;
 * - prom-client: the default metrics and a request duration histogram by method, route template
 *   and status, served on a listener of its own (METRICS_PORT), never on the API port;
 * - express-rate-limit per user: keyed by the caller when the token cache already knows its token,
 *   else by client address, RATE_LIMIT_PER_MINUTE a minute, with the IETF RateLimit headers.
 *
 *   PORT=3104 METRICS_PORT=0 DATABASE_URL=mysql://root@127.0.0.1:3306/plantstore node express-prod-peer.js
 */
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { pinoHttp } from 'pino-http';
import { Histogram, collectDefaultMetrics, register } from 'prom-client';
import { expressPeerApp, sendJson, serve } from './express-app';
import { PlantStore, errorBody, readConfig } from './plants-core';

const config = readConfig();
const store = new PlantStore(config);
const env = process.env;

/** 1 to 128 visible ASCII characters: what a request id from a client may be. */
const VALID_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

const requestLog = pinoHttp({
  level: env.LOG_LEVEL ?? 'info',
  genReqId: requestId,
  // The bearer token must never reach a log.
  redact: ['req.headers.authorization'],
});

collectDefaultMetrics();
const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
});

/** Times each request; its route template is known once it was routed, hence on finish. */
function timeRequest(req: Request, res: Response, next: NextFunction): void {
  const end = requestDuration.startTimer();
  res.on('finish', () => {
    end({
      method: req.method,
      route: (req.route as { path?: string } | undefined)?.path ?? 'unmatched',
      status: res.statusCode,
    });
  });
  next();
}

const perMinute = Number(env.RATE_LIMIT_PER_MINUTE ?? 600);
const rateLimitPerUser = rateLimit({
  windowMs: 60_000,
  limit: perMinute,
  standardHeaders: 'draft-8',
  legacyHeaders: false,
  // A token already known as valid counts against its user; any other call against its address.
  keyGenerator: (req) => {
    const subject = store.knownSubject(req.headers.authorization);
    return subject === null ? `ip:${ipKeyGenerator(req.ip ?? '')}` : `user:${subject}`;
  },
  handler: (_req, res) => {
    sendJson(res, 429, errorBody(429, `Too many requests: at most ${perMinute} per minute`));
  },
});

const middleware: RequestHandler[] = [requestLog, helmet(), timeRequest, rateLimitPerUser];

const metricsApp = express();
metricsApp.get('/metrics', async (_req: Request, res: Response) => {
  res.type(register.contentType).send(await register.metrics());
});
const metricsServer = metricsApp.listen(Number(env.METRICS_PORT ?? 9464), config.host, () => {
  requestLog.logger.info(`metrics on http://${config.host}:${(metricsServer.address() as AddressInfo).port}/metrics`);
});

serve(expressPeerApp(store, middleware), store, config, 'express peer with production middleware', () =>
  metricsServer.close(),
);
