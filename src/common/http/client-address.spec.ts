import express from 'express';
import { IncomingMessage, Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { clientAddress } from './client-address';

describe(clientAddress.name, () => {
  /** An Express app under `trust proxy` = `trust`, answering with the client address of each request. */
  async function serve(trust: boolean | string): Promise<Server> {
    const app = express();
    app.set('trust proxy', trust);
    app.get('/', (req, res) => {
      res.json({ client: clientAddress(req) ?? null });
    });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  async function clientOf(server: Server, headers: Record<string, string>): Promise<string | null> {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers });
    return ((await res.json()) as { client: string | null }).client;
  }

  const FORGED = {
    'x-forwarded-for': '203.0.113.77',
    forwarded: 'for=198.51.100.1',
    'x-real-ip': '198.51.100.2',
  };

  it.each([
    ['no proxy trusted', false, {}, '127.0.0.1'],
    ['no proxy trusted', false, FORGED, '127.0.0.1'],
    ['loopback trusted', 'loopback', {}, '127.0.0.1'],
    ['loopback trusted', 'loopback', { 'x-forwarded-for': '198.51.100.9, 203.0.113.77' }, '203.0.113.77'],
    // Express reads X-Forwarded-For alone, from a trusted proxy or not.
    ['loopback trusted', 'loopback', { forwarded: 'for=198.51.100.1', 'x-real-ip': '198.51.100.2' }, '127.0.0.1'],
    ['another proxy trusted', '10.0.0.0/8', FORGED, '127.0.0.1'],
  ])('%s (%j), headers %j: %s', async (_label, trust, headers, expected) => {
    const server = await serve(trust);
    try {
      await expect(clientOf(server, headers)).resolves.toBe(expected);
    } finally {
      server.close();
    }
  });

  it('is the socket address for a request Express has not taken yet, whatever its headers say', () => {
    const request = { headers: FORGED, socket: { remoteAddress: '192.0.2.4' } } as unknown as IncomingMessage;
    expect(clientAddress(request)).toBe('192.0.2.4');
  });
});
