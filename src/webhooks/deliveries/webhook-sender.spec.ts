import { createServer, IncomingMessage, IncomingHttpHeaders, ServerResponse } from 'node:http';
import { AddressInfo, createServer as createTcpServer, Server, Socket } from 'node:net';
import { CheckedAddress } from './address-policy';
import { AttemptResult, sendWebhook, USER_AGENT, WebhookRequest } from './webhook-sender';
import { MAX_RESPONSE_BODY_BYTES } from '../webhooks.limits';

const loopback: CheckedAddress = { address: '127.0.0.1', family: 4 };

interface Received {
  method?: string;
  path?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const servers: Server[] = [];
const sockets = new Set<Socket>();

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A local receiver that records each request, its body read in full, before `respond` runs. */
async function receiver(respond: (response: ServerResponse, request: IncomingMessage) => void) {
  const received: Received[] = [];
  const port = await listen(
    createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          method: request.method,
          path: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        respond(response, request);
      });
    }),
  );
  return { port, received };
}

/** A receiver that answers its first request with `start`; `closed` resolves when that connection is closed. */
async function hangingReceiver(start: (response: ServerResponse) => void) {
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const { port } = await receiver((response) => {
    response.on('close', () => resolveClosed());
    start(response);
  });
  return { port, closed };
}

function send(url: string, overrides: Partial<WebhookRequest> = {}): Promise<AttemptResult> {
  return sendWebhook({ url: new URL(url), checked: loopback, headers: {}, body: '{}', timeoutMs: 5000, ...overrides });
}

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('sendWebhook', () => {
  it('posts the body and headers exactly, with its own framing, type and user agent', async () => {
    const { port, received } = await receiver((response) => response.writeHead(204).end());
    const body = JSON.stringify({ type: 'plant.created', data: { name: 'Monstera déliciosa 🌿' } });
    const result = await send(`http://127.0.0.1:${port}/in?team=1`, {
      body,
      headers: {
        'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
        'webhook-timestamp': '1700000000',
        'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        'Content-Type': 'text/plain',
        'Content-Length': '1',
      },
    });

    expect(result).toEqual({ status: 204, durationMs: expect.any(Number) });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', path: '/in?team=1', body });
    expect(received[0].headers).toMatchObject({
      host: `127.0.0.1:${port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': USER_AGENT,
      'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    });
  });

  it('returns an error status as a status', async () => {
    const { port } = await receiver((response) => response.writeHead(500).end('boom'));
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toEqual({ status: 500, durationMs: expect.any(Number) });
  });

  it('does not follow a redirect', async () => {
    const target = await receiver((response) => response.writeHead(200).end());
    const { port, received } = await receiver((response) =>
      response.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` }).end(),
    );
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toEqual({ status: 302, durationMs: expect.any(Number) });
    expect(received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('connects to the checked address, whatever the hostname resolves to, and sends the hostname as Host', async () => {
    const { port, received } = await receiver((response) => response.writeHead(200).end());
    // .test never resolves: a lookup of the hostname would fail the attempt.
    const result = await send(`http://hooks.example.test:${port}/x`);
    expect(result).toEqual({ status: 200, durationMs: expect.any(Number) });
    expect(received[0].headers.host).toBe(`hooks.example.test:${port}`);
  });

  it('speaks TLS to the checked address with the hostname as SNI, and reports a failed handshake by code', async () => {
    let hello: Buffer | undefined;
    const port = await listen(
      createTcpServer((socket) => {
        socket.once('data', (chunk: Buffer) => {
          hello = chunk;
          // A plain HTTP server on the TLS port, a common receiver mistake.
          socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
        });
      }),
    );
    const result = await send(`https://hooks.example.test:${port}/x`);
    expect(result.error).toMatch(/^TLS error: [A-Z0-9_]+$/);
    expect(result.status).toBeUndefined();
    // A TLS handshake record, carrying the server name in clear.
    expect(hello?.[0]).toBe(0x16);
    expect(hello?.includes('hooks.example.test')).toBe(true);
  });

  it('cuts a receiver that does not answer at the timeout and closes the connection', async () => {
    const { port, closed } = await hangingReceiver(() => undefined);
    const result = await send(`http://127.0.0.1:${port}/in`, { timeoutMs: 300 });
    await closed;
    expect(result).toEqual({ error: 'timeout after 300 ms', durationMs: expect.any(Number) });
    // Timers may fire a few milliseconds before the interval as measured here.
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(300 + 2000);
  });

  it('counts reading the body in the timeout', async () => {
    const { port, closed } = await hangingReceiver((response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('{"partial":');
    });
    const result = await send(`http://127.0.0.1:${port}/in`, { timeoutMs: 300 });
    await closed;
    expect(result).toEqual({ error: 'timeout after 300 ms', durationMs: expect.any(Number) });
  });

  it('stops reading a response body at its cap and keeps the status', async () => {
    const chunk = Buffer.alloc(16 * 1024, 'x');
    let written = 0;
    const { port, closed } = await hangingReceiver((response) => {
      response.writeHead(200);
      // An endless body: only the sender closing the connection ends it.
      const pump = () => {
        while (!response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return;
        }
      };
      response.on('drain', pump);
      response.on('error', () => undefined);
      pump();
    });
    const result = await send(`http://127.0.0.1:${port}/in`, { timeoutMs: 10_000 });
    await closed;
    expect(result).toEqual({ status: 200, durationMs: expect.any(Number) });
    expect(written).toBeGreaterThan(MAX_RESPONSE_BODY_BYTES);
  });

  it('keeps the status when the receiver cuts the body short', async () => {
    const { port } = await receiver((response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('{"partial":', () => response.socket?.destroy());
    });
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toEqual({
      status: 200,
      durationMs: expect.any(Number),
    });
  });

  it('reports a connection closed before any response', async () => {
    const { port } = await receiver((response) => response.socket?.destroy());
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toEqual({
      error: 'connection closed without a response',
      durationMs: expect.any(Number),
    });
  });

  it('sends the next attempt to the same address on the connection the last one left open', async () => {
    const { port, received } = await receiver((response) => response.writeHead(204).end());
    const connections: Socket[] = [];
    servers.at(-1)!.on('connection', (socket: Socket) => connections.push(socket));
    for (let i = 0; i < 3; i++)
      await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toMatchObject({ status: 204 });
    expect(received).toHaveLength(3);
    expect(connections).toHaveLength(1);
  });

  it('sends again on a new connection when the receiver closed the pooled one meanwhile', async () => {
    let answered = 0;
    const { port, received } = await receiver((response) => {
      answered += 1;
      // The second request finds the connection the first one left: the receiver drops it unanswered,
      // as a server whose keep-alive timeout passed at that moment does.
      if (answered === 2) response.socket?.destroy();
      else response.writeHead(204).end();
    });
    const connections: Socket[] = [];
    servers.at(-1)!.on('connection', (socket: Socket) => connections.push(socket));
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toMatchObject({ status: 204 });
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toMatchObject({ status: 204 });
    expect(received).toHaveLength(3);
    expect(connections).toHaveLength(2);
  });

  it('does not send again when a new connection is closed without an answer', async () => {
    const { port, received } = await receiver((response) => response.socket?.destroy());
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toMatchObject({
      error: 'connection closed without a response',
    });
    expect(received).toHaveLength(1);
  });

  it('reports a refused connection', async () => {
    const server = createTcpServer();
    const port = await listen(server);
    servers.splice(servers.indexOf(server), 1);
    await new Promise((resolve) => server.close(resolve));
    await expect(send(`http://127.0.0.1:${port}/in`)).resolves.toEqual({
      error: 'connection refused',
      durationMs: expect.any(Number),
    });
  });

  it('reports a header that cannot be sent instead of throwing', async () => {
    const { port, received } = await receiver((response) => response.writeHead(200).end());
    await expect(
      send(`http://127.0.0.1:${port}/in`, { headers: { 'webhook-id': 'msg_1\r\nx-injected: 1' } }),
    ).resolves.toEqual({ error: 'invalid request header', durationMs: expect.any(Number) });
    expect(received).toHaveLength(0);
  });

  it('refuses to connect to a checked address that is not an IP address', async () => {
    await expect(
      send('http://hooks.example.test/in', { checked: { address: 'localhost', family: 4 } }),
    ).resolves.toEqual({ error: 'connection failed: invalid address', durationMs: expect.any(Number) });
  });
});
