import { IncomingMessage, Server, ServerResponse, STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';

/** Called once for every request Node's HTTP layer refuses before the application sees it. */
export type HttpLayerRefusal = (status: number, method: string | undefined) => void;

/** Node's own choice of status for a parser error (its default `clientError` handling), with our message. */
function refusalOf(code: unknown): { status: number; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'The request line and headers exceed 16 KiB' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'The chunk extensions of the body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'The request did not arrive in time' };
    default:
      return { status: 400, message: 'The request is not valid HTTP/1.1' };
  }
}

function errorBody(status: number, message: string): string {
  return JSON.stringify({ error: status, message });
}

/**
 * Answers what Node's HTTP layer refuses by itself with the service's `{error, message}` body
 * rather than Node's bare status lines: a request it cannot parse (400), a request line and headers
 * over the 16 KiB limit (431), an `Expect` other than `100-continue` (417). Each is reported to
 * `refused` (for metrics), since no middleware ever sees it.
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
    const { status, message } = refusalOf(error.code);
    const body = errorBody(status, message);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    refused(status, undefined);
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = errorBody(417, 'The only expectation the service meets is "Expect: 100-continue"');
    res.shouldKeepAlive = false;
    res
      .writeHead(417, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      })
      .end(body);
    refused(417, req.method);
  });
}
