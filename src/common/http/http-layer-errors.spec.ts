import { Server, createServer, request } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { answerHttpLayerErrors } from './http-layer-errors';
import { HostMissing } from './http.errors';

/** Writes raw bytes and reads until the server closes the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection not closed within 5 s: ${JSON.stringify(text)}`));
    }, 5000);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}

function parse(text: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body, 'latin1'));
  return { status: Number(statusLine.slice(9, 12)), headers, body: JSON.parse(body) };
}

describe(answerHttpLayerErrors.name, () => {
  let server: Server;
  let port: number;
  let refused: jest.Mock;

  beforeEach(async () => {
    refused = jest.fn();
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('served'));
    });
    answerHttpLayerErrors(server, refused);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each([
    ['a malformed request line', 'GET /\u0000 HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a request that is not HTTP at all', 'hello\r\n\r\n', 400],
    [
      'conflicting Content-Length and Transfer-Encoding',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
    ],
    ['20 KB of headers', `GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('answers %s with the Error body and closes the connection', async (_label, bytes, status) => {
    const answer = parse(await exchange(port, bytes));
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({ error: status, message: expect.stringMatching(/^The /) });
    expect(refused).toHaveBeenCalledWith(status, undefined);
  });

  it('answers an unknown Expect with 417 and the Error body, without running the handler', async () => {
    const answer = parse(
      await exchange(port, 'POST /plants HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}'),
    );
    expect(answer.status).toBe(417);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.body).toEqual({ error: 417, message: expect.stringContaining('100-continue') });
    expect(refused).toHaveBeenCalledWith(417, 'POST');
  });

  it('answers an HTTP/1.1 request without Host with 400 and the Error body, without running the handler', async () => {
    const answer = parse(await exchange(port, 'GET /plants HTTP/1.1\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({ error: 400, message: new HostMissing().message });
    expect(refused).toHaveBeenCalledWith(400, 'GET');
  });

  it('leaves an HTTP/1.0 request without Host to the server, as Node does', async () => {
    const text = await exchange(port, 'GET / HTTP/1.0\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.endsWith('served')).toBe(true);
    expect(refused).not.toHaveBeenCalled();
  });

  it('leaves Expect: 100-continue and ordinary requests to the server', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        headers: { Expect: '100-continue', 'Content-Length': '2' },
      });
      req.on('continue', () => req.end('{}'));
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${body}`));
      });
      req.on('error', reject);
      req.setTimeout(5000, () => req.destroy(new Error('no answer within 5 s')));
    });
    expect(text).toBe('200 served');
    expect(refused).not.toHaveBeenCalled();
  });

  it('writes nothing to a client that reset the connection, and does not count it', () => {
    const socket = { writable: true, destroy: jest.fn(), end: jest.fn() };
    server.emit('clientError', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), socket);
    expect(socket.destroy).toHaveBeenCalled();
    expect(socket.end).not.toHaveBeenCalled();
    expect(refused).not.toHaveBeenCalled();
  });

  it('writes nothing while an answer is already on the wire', () => {
    const socket = { writable: true, destroy: jest.fn(), end: jest.fn(), _httpMessage: { _headerSent: true } };
    server.emit('clientError', Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_METHOD' }), socket);
    expect(socket.destroy).toHaveBeenCalled();
    expect(socket.end).not.toHaveBeenCalled();
  });
});
