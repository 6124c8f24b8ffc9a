import { HttpException } from '@nestjs/common';
import { IncomingMessage, RequestListener, Server, ServerResponse, STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';
import {
  ChunkExtensionsTooLarge,
  ExpectationNotMet,
  HeadersTooLarge,
  HostMissing,
  NotHttp,
  RequestTimedOut,
} from './http.errors';

/** Called once for every request Node's HTTP layer refuses before the application sees it. */
export type HttpLayerRefusal = (status: number, method: string | undefined) => void;

/**
 * What Node's HTTP layer refuses before the service sees the request, whatever its route: each
 * operation of the OpenAPI document declares them.
 */
export const HTTP_LAYER_REFUSALS = [
  NotHttp.doc,
  HostMissing.doc,
  RequestTimedOut.doc,
  ChunkExtensionsTooLarge.doc,
  ExpectationNotMet.doc,
  HeadersTooLarge.doc,
];

/** Node's own choice of status for a parser error (its default `clientError` handling), with our message. */
function refusalOf(code: unknown): HttpException {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLarge();
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ChunkExtensionsTooLarge();
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimedOut();
    default:
      return new NotHttp();
  }
}

function errorBody(refusal: HttpException): string {
  return JSON.stringify({ error: refusal.getStatus(), message: refusal.message });
}

/** Answers a request with the refusal, and closes its connection: what follows on it is not read. */
function refuse(res: ServerResponse, refusal: HttpException): void {
  const body = errorBody(refusal);
  res.shouldKeepAlive = false;
  res
    .writeHead(refusal.getStatus(), {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    })
    .end(body);
}

/**
 * Answers what Node's HTTP layer refuses by itself with the service's `{error, message}` body
 * rather than Node's bare status lines: a request it cannot parse (400), a request line and headers
 * over the 16 KiB limit (431), chunk extensions over its limit (413), a request that does not arrive
 * in time (408), an `Expect` other than `100-continue` (417), an HTTP/1.1 request without `Host`
 * (400). Each is reported to `refused` (for metrics), since no middleware ever sees it.
 */
export function answerHttpLayerErrors(server: Server, refused: HttpLayerRefusal): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The client is gone, or an answer is already on the wire: anything written now would be lost or
    // corrupt it (Node's own handling makes the same checks).
    const inFlight = (socket as Duplex & { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?._headerSent) {
      socket.destroy();
      return;
    }
    const refusal = refusalOf(error.code);
    const body = errorBody(refusal);
    socket.end(
      `HTTP/1.1 ${refusal.getStatus()} ${STATUS_CODES[refusal.getStatus()]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    refused(refusal.getStatus(), undefined);
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refuse(res, new ExpectationNotMet());
    refused(417, req.method);
  });

  refuseRequestsWithoutHost(server, refused);
}

/**
 * Node answers an HTTP/1.1 request without `Host` with a bare 400 of its own, before any listener
 * sees it. It is left to the service instead, and refused here, before the request reaches the
 * application: the same 400 (RFC 9112 section 3.2), with the Error body.
 */
function refuseRequestsWithoutHost(server: Server, refused: HttpLayerRefusal): void {
  // The `requireHostHeader` option of createServer, which Node reads from the server on each request.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      refuse(res, new HostMissing());
      refused(400, req.method);
      return;
    }
    for (const listener of listeners) listener.call(server, req, res);
  });
}
