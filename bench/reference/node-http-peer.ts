/**
 * The floor: the plant store's contract on bare node:http + mysql2, with no framework at all.
 * Same SQL and token cache as the Express peer (plants-core.ts); only the HTTP layer differs.
 *
 *   PORT=3103 DATABASE_URL=mysql://root@127.0.0.1:3306/plantstore node node-http-peer.js
 */
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import {
  BODY_LIMIT_BYTES,
  HttpError,
  PlantStore,
  errorBody,
  parseId,
  parseJson,
  parseListQuery,
  readConfig,
  toHttpError,
  validateNewPlant,
} from './plants-core';

const config = readConfig();
const store = new PlantStore(config);

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8' };

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** `application/json` or `application/*+json`, UTF-8 if a charset is named. */
function checkContentType(header: string | undefined): void {
  const [type, ...params] = (header ?? '').split(';');
  const media = type.trim().toLowerCase();
  if (media !== 'application/json' && !/^application\/[^/]+\+json$/.test(media)) {
    throw new HttpError(415, 'Request body must be JSON (Content-Type: application/json)');
  }
  const charset = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='));
  if (charset && !/^charset="?utf-?8"?$/.test(charset)) {
    throw new HttpError(415, 'Request body must be UTF-8 JSON (identity, gzip or deflate encoded)');
  }
}

function tooLarge(): HttpError {
  return new HttpError(413, `Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
}

/** The body as text, at most 16 KiB after decompression; undefined when there is none. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const declared = req.headers['content-length'];
  if (declared === '0' || (declared === undefined && req.headers['transfer-encoding'] === undefined)) return undefined;
  checkContentType(req.headers['content-type']);
  if (declared !== undefined && Number(declared) > BODY_LIMIT_BYTES) throw tooLarge();

  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  let raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'gzip' || encoding === 'deflate') {
    try {
      raw = (encoding === 'gzip' ? gunzipSync : inflateSync)(raw, { maxOutputLength: BODY_LIMIT_BYTES });
    } catch (error) {
      throw (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
        ? tooLarge()
        : new HttpError(400, 'Request body could not be read');
    }
  } else if (encoding !== 'identity') {
    throw new HttpError(415, 'Request body must be UTF-8 JSON (identity, gzip or deflate encoded)');
  }
  return raw.toString('utf8');
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw new HttpError(400, 'Malformed percent-encoding in the path');
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);

  if (path === '/plants' && req.method === 'POST') {
    const text = await readBody(req);
    const body = text ? parseJson(text) : undefined;
    const caller = await store.authorize(req.headers.authorization, 'plants:write');
    send(res, 200, await store.create(caller.subject, validateNewPlant(body)));
    return;
  }
  if (path === '/plants' && (req.method === 'GET' || req.method === 'HEAD')) {
    const caller = await store.authorize(req.headers.authorization, 'plants:read');
    const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const seen = new Map<string, string | string[]>();
    for (const [key, value] of params) {
      const prior = seen.get(key);
      seen.set(key, prior === undefined ? value : ([] as string[]).concat(prior, value));
    }
    const page = await store.list(caller.subject, parseListQuery(seen));
    send(res, 200, page.body, page.link ? { Link: page.link } : {});
    return;
  }
  if (path.startsWith('/plants/') && path.indexOf('/', 8) === -1 && req.method === 'DELETE') {
    const caller = await store.authorize(req.headers.authorization, 'plants:write');
    await store.remove(caller.subject, parseId(decodePath(path.slice(8))));
    res.writeHead(204);
    res.end();
    return;
  }
  throw new HttpError(404, `Cannot ${req.method} ${decodePath(path)}`);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    const failure = toHttpError(error);
    if (res.headersSent) {
      res.end();
      return;
    }
    // A body left unread (413, 415) would be taken for the next request: close the connection.
    const headers: Record<string, string> =
      failure.status === 413 || failure.status === 415 ? { Connection: 'close' } : {};
    if (failure.challenge) headers['WWW-Authenticate'] = failure.challenge;
    send(res, failure.status, errorBody(failure.status, failure.message), headers);
  });
});

server.listen(config.port, config.host, () => {
  console.log(`node:http peer listening on http://${config.host}:${config.port}`);
});

function shutdown(): void {
  server.close(() => void store.pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
