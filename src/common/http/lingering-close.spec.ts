import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo, Socket, connect } from 'node:net';
import { LingerBounds, lingeringClose } from './lingering-close';

const BOUNDS: LingerBounds = { maxMs: 1500, idleMs: 400, maxBytes: 256 * 1024 };
const ANSWER = '{"error":413,"message":"too large"}';
/** What the service reads from a socket at once, at most: how far past maxBytes its count may be when it cuts. */
const ONE_READ = 64 * 1024;

/** A connection as the server saw it close. */
interface Closed {
  /** From the answer to the close. */
  msAfterAnswer: number;
  bytesRead: number;
}

/** What the client saw. */
interface Seen {
  answer: string;
  /** Whether its connection ended without a reset. */
  clean: boolean;
}

describe(lingeringClose.name, () => {
  let server: Server;
  let port: number;
  /** The server's side of each connection, in order, once it has closed. */
  let closed: Promise<Closed>[];
  let clients: Socket[];

  beforeEach(async () => {
    closed = [];
    clients = [];
    server = createServer();
    const linger = lingeringClose(server, BOUNDS);
    // Every request is refused at once, its body unread, as the service refuses a body too large.
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const answeredAt = Date.now();
      closed.push(
        new Promise((resolve) =>
          req.socket.once('close', () =>
            resolve({ msAfterAnswer: Date.now() - answeredAt, bytesRead: req.socket.bytesRead }),
          ),
        ),
      );
      linger(res);
      res.writeHead(413, { 'Content-Type': 'application/json', 'Content-Length': ANSWER.length }).end(ANSWER);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    for (const client of clients) client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /**
   * Sends a request head declaring `length` bytes of body, then `next()` pieces of it (until it
   * returns undefined), each after `pauseMs`, whatever comes back. Once it has sent all `length`
   * bytes and the server has ended its side, it closes its own. `lingering` resolves once the
   * server has ended its side after the answer (the answer has arrived); `seen` once the
   * connection is closed, which a client that stalls learns only when it sends again.
   */
  function send(
    length: number,
    next: (sent: number) => Buffer | undefined,
    pauseMs = 0,
  ): { lingering: Promise<void>; seen: Promise<Seen> } {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    clients.push(socket);
    let answer = '';
    let sent = 0;
    let reset = false;
    let serverEnded = false;
    const closeOnceDone = () => sent === length && serverEnded && socket.end();
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    socket.on('error', () => (reset = true));
    const lingering = new Promise<void>((resolve) =>
      socket.on('end', () => {
        serverEnded = true;
        closeOnceDone();
        resolve();
      }),
    );
    const seen = new Promise<Seen>((resolve) => socket.on('close', () => resolve({ answer, clean: !reset })));
    void (async () => {
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n`);
      for (let piece = next(sent); piece !== undefined && !socket.destroyed; piece = next(sent)) {
        await new Promise<void>((done) => socket.write(piece, () => done()));
        sent += piece.length;
        if (pauseMs > 0) await new Promise((done) => setTimeout(done, pauseMs));
      }
      closeOnceDone();
    })();
    return { lingering, seen };
  }

  /** Sends one piece of the body, then nothing more: a client that stalls. */
  const stalls = (sent: number) => (sent === 0 ? Buffer.alloc(1024, 0x20) : undefined);

  it('reads the rest of a body sent after the answer, then closes cleanly: the client gets the answer', async () => {
    const length = 200 * 1024;
    const { seen } = send(length, (sent) => (sent < length ? Buffer.alloc(8 * 1024, 0x20) : undefined), 2);
    const { answer, clean } = await seen;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer.endsWith(ANSWER)).toBe(true);
    expect(clean).toBe(true);
    expect((await closed[0]).bytesRead).toBeGreaterThan(length);
  });

  it('cuts a client that goes on sending once maxBytes more have been read', async () => {
    await send(1024 ** 3, () => Buffer.alloc(16 * 1024, 0x20)).lingering;
    const { bytesRead, msAfterAnswer } = await closed[0];
    // The head and what came with it, then maxBytes and at most one read more.
    expect(bytesRead).toBeGreaterThan(BOUNDS.maxBytes);
    expect(bytesRead).toBeLessThan(BOUNDS.maxBytes + 2 * ONE_READ);
    expect(msAfterAnswer).toBeLessThan(BOUNDS.maxMs);
  });

  it('cuts a client that stops sending in the middle once idleMs have passed without a byte', async () => {
    await send(100 * 1024, stalls).lingering;
    const { msAfterAnswer } = await closed[0];
    expect(msAfterAnswer).toBeGreaterThanOrEqual(BOUNDS.idleMs - 50);
    expect(msAfterAnswer).toBeLessThan(BOUNDS.maxMs);
  });

  it('cuts a client that trickles its body for ever once maxMs have passed', async () => {
    await send(1024 ** 2, () => Buffer.from(' '), BOUNDS.idleMs / 8).lingering;
    const { msAfterAnswer } = await closed[0];
    expect(msAfterAnswer).toBeGreaterThanOrEqual(BOUNDS.maxMs - 50);
    expect(msAfterAnswer).toBeLessThan(BOUNDS.maxMs + 1000);
  });

  it('ends a lingering connection when the idle connections are closed, as at shutdown', async () => {
    await send(100 * 1024, stalls).lingering;
    server.closeIdleConnections();
    const { msAfterAnswer } = await closed[0];
    expect(msAfterAnswer).toBeLessThan(BOUNDS.idleMs);
  });
});
