/**
 * What both Express peers share: the plant store's routes on Express 5 over plants-core.ts, and
 * serving them. The plain peer (express-peer.ts) runs them bare; the production peer
 * (express-prod-peer.ts) puts the middleware an Express team ships in front of the same routes, so
 * the distance between the two is what that middleware costs.
 */
import express, { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { Server, createServer } from 'node:http';
import {
  BODY_LIMIT_BYTES,
  HttpError,
  PeerConfig,
  PlantStore,
  errorBody,
  parseId,
  parseJson,
  parseListQuery,
  toHttpError,
  validateNewPlant,
} from './plants-core';

const JSON_TYPES = ['application/json', 'application/*+json'];
const readText = express.text({ type: () => true, limit: BODY_LIMIT_BYTES, defaultCharset: 'utf-8' });

export function sendJson(res: Response, status: number, body: string): void {
  res.status(status).type('application/json; charset=utf-8').send(body);
}

/** The three routes of the contract. */
function addRoutes(app: Express, store: PlantStore): void {
  app.post(
    '/plants',
    (req: Request, _res: Response, next: NextFunction) => {
      // req.is() is null without a body: the validation below answers that one.
      if (req.is(JSON_TYPES) === false) {
        throw new HttpError(415, 'Request body must be JSON (Content-Type: application/json)');
      }
      next();
    },
    readText,
    async (req: Request, res: Response) => {
      const raw = req.body as unknown;
      const body = typeof raw === 'string' && raw.length > 0 ? parseJson(raw) : undefined;
      const caller = await store.authorize(req.headers.authorization, 'plants:write');
      sendJson(res, 200, await store.create(caller.subject, validateNewPlant(body)));
    },
  );

  app.get('/plants', async (req: Request, res: Response) => {
    const caller = await store.authorize(req.headers.authorization, 'plants:read');
    const page = await store.list(
      caller.subject,
      parseListQuery(Object.entries(req.query as Record<string, string | string[]>)),
    );
    if (page.link) res.setHeader('Link', page.link);
    sendJson(res, 200, page.body);
  });

  app.delete('/plants/:id', async (req: Request<{ id: string }>, res: Response) => {
    const caller = await store.authorize(req.headers.authorization, 'plants:write');
    await store.remove(caller.subject, parseId(req.params.id));
    res.status(204).end();
  });
}

/** Body-reader failures carry a `type`; everything else is an HttpError or unexpected. */
function answerError(error: unknown, _req: Request, res: Response, _next: NextFunction): void {
  const type = (error as { type?: string }).type;
  const failure =
    type === 'entity.too.large'
      ? new HttpError(413, `Request body exceeds ${BODY_LIMIT_BYTES} bytes`)
      : type === 'charset.unsupported' || type === 'encoding.unsupported'
        ? new HttpError(415, 'Request body must be UTF-8 JSON (identity, gzip or deflate encoded)')
        : type !== undefined
          ? new HttpError(400, 'Request body could not be read')
          : toHttpError(error);
  if (failure.challenge) res.setHeader('WWW-Authenticate', failure.challenge);
  sendJson(res, failure.status, errorBody(failure.status, failure.message));
}

/** The contract on Express: `middleware` first, then the routes, the 404 and the error answers. */
export function expressPeerApp(store: PlantStore, middleware: RequestHandler[] = []): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // No conditional 304s, as in the service.
  Object.defineProperty(app.request, 'fresh', { get: () => false });
  for (const handler of middleware) app.use(handler);
  addRoutes(app, store);
  app.use((req: Request, res: Response) => {
    sendJson(res, 404, errorBody(404, `Cannot ${req.method} ${req.path}`));
  });
  app.use(answerError);
  return app;
}

/** Serves `app` on the configured port until SIGTERM or SIGINT; `onClose` releases what else it holds. */
export function serve(app: Express, store: PlantStore, config: PeerConfig, name: string, onClose?: () => void): Server {
  const server = createServer(app);
  server.listen(config.port, config.host, () => {
    console.log(`${name} listening on http://${config.host}:${config.port}`);
  });
  const shutdown = (): void => {
    onClose?.();
    server.close(() => void store.pool.end().then(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  return server;
}
