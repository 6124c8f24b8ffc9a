import { IncomingHttpHeaders, request } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { INestApplication } from '@nestjs/common';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RawRequest {
  method?: string;
  /** The request target exactly as written on the request line (not re-encoded). */
  path: string;
  /** Headers as given; an array of [name, value] pairs keeps repeated headers and their order. */
  headers?: Record<string, string | string[]> | [string, string][];
  body?: Buffer | string;
  /** The request fails (never hangs) when no complete answer arrives in time. */
  timeoutMs?: number;
}

/** Makes a test app listen on a loopback port (real sockets, real parallelism) and returns the port. */
export async function listenOnLoopback(app: INestApplication): Promise<number> {
  const server = app.getHttpServer();
  if (!server.listening) await app.listen(0, '127.0.0.1');
  return (server.address() as AddressInfo).port;
}

/**
 * One HTTP request with exactly the bytes and headers given (supertest would re-encode a Buffer
 * body as JSON or set a Content-Type of its own). A response that arrives while the body is still
 * being written (e.g. an early 413) is returned; a write error after it is ignored.
 */
export function rawRequest(port: number, options: RawRequest): Promise<RawResponse> {
  const { method = 'GET', path, headers = {}, body, timeoutMs = 10_000 } = options;
  return new Promise<RawResponse>((resolve, reject) => {
    let answered = false;
    const flatHeaders = Array.isArray(headers) ? headers.flat() : headers;
    const req = request({ host: '127.0.0.1', port, method, path, headers: flatHeaders, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        answered = true;
        clearTimeout(timer);
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes, text: bytes.toString('utf8') });
      });
      res.on('error', (error) => !answered && reject(error));
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${path.slice(0, 80)}: no complete answer within ${timeoutMs} ms (hang)`));
    }, timeoutMs);
    req.on('error', (error) => {
      // EPIPE/ECONNRESET while still sending means the server answered early and closed; the
      // response handler above resolves if an answer arrived.
      setTimeout(() => {
        if (!answered) {
          clearTimeout(timer);
          reject(error);
        }
      }, 200);
    });
    req.end(body);
  });
}

/**
 * Writes raw bytes on a fresh TCP connection and reads until the server closes it or stops sending:
 * for requests Node's own HTTP client refuses to send (a NUL byte in the request line, say).
 */
export function rawSocketExchange(
  port: number,
  bytes: Buffer,
  timeoutMs = 10_000,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, text });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms (hang)`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
      // A complete response with a Content-Length is enough; otherwise wait for the close.
      if (head >= 0 && length && Buffer.byteLength(text, 'latin1') >= head + 4 + Number(length[1])) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}

/**
 * A clean refusal: one of `statuses`, JSON, and exactly `{ error: <status>, message: <non-empty string> }`.
 * Takes a supertest response or a RawResponse.
 */
export function expectCleanError(
  res: { status: number; headers: Record<string, unknown>; text: string },
  statuses: number[],
): void {
  if (!statuses.includes(res.status)) {
    // Name the whole answer: a wrong status here is a finding to report, request and response.
    throw new Error(
      `expected status ${statuses.join(' or ')}, got ${res.status} ${JSON.stringify(res.text.slice(0, 300))}`,
    );
  }
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body: unknown = JSON.parse(res.text);
  expect(body).toEqual({ error: res.status, message: expect.any(String) });
  expect((body as { message: string }).message.length).toBeGreaterThan(0);
}
