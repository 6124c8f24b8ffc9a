import { connect } from 'node:net';
import { constants, createDeflate, createGzip, gzipSync } from 'node:zlib';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../src/common/http/http.limits';
import { BodyTooLarge } from '../src/common/json/json-body.errors';
import { exactBody, expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { expectCleanError, listenOnLoopback, rawRequest } from './utils/raw-http';
import { TestApp, bearer, startTestApp } from './utils/test-app';

const KIB = 1024;
const MIB = 1024 * KIB;
/** A megabyte, as a client counts it: some sixty times the cap. */
const MB = 1_000_000;
const GIB = 1024 * MIB;
/**
 * What can be on its way between a client and the service on loopback, in the two kernels' socket
 * buffers, when the service cuts the connection: written by the client, never read.
 */
const IN_FLIGHT_BYTES = 40 * MIB;

interface StreamedExchange {
  status: number;
  headers: string;
  body: string;
  /** Body bytes written before the answer's status line arrived. */
  sentBeforeAnswer: number;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
}

/**
 * Sends a request head, then body chunks from `nextChunk` for as long as the server reads them,
 * never more than `maxBytes`, and reports what came back. A server that waits for the end of an
 * endless body never answers; this gives up after `maxBytes` or `timeoutMs` and fails the test.
 */
function streamBody(
  port: number,
  head: string,
  nextChunk: () => Buffer,
  { maxBytes = 256 * MIB, timeoutMs = 15_000 } = {},
): Promise<StreamedExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let sent = 0;
    let sentBeforeAnswer = -1;
    let answer = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (sentBeforeAnswer < 0) {
        reject(new Error(`no answer after ${sent} body bytes`));
        return;
      }
      const end = answer.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0),
        headers: answer.slice(0, end),
        body: answer.slice(end + 4),
        sentBeforeAnswer,
        closed,
      });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (data: Buffer) => {
      if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
      answer += data.toString('latin1');
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    const pump = () => {
      while (!done && sentBeforeAnswer < 0 && sent < maxBytes) {
        const chunk = nextChunk();
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (sent >= maxBytes && sentBeforeAnswer < 0) finish(false);
    };
    socket.write(head, pump);
  });
}

/** One HTTP/1.1 chunk of `data`. */
const chunked = (data: Buffer) =>
  Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);

/**
 * The body cap holds on every way a body can arrive: a declared length, no length at all (chunked),
 * and compressed, counted on the wire and after decoding, with the answer as soon as the cap is
 * passed and the connection closed after it, once what is still arriving has been read within the
 * lingering bounds, so the client gets the answer and an endless body costs the service little more.
 */
describe.each(testDatabases())('Request body limits on %s', (database) => {
  let t: TestApp;
  let port: number;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database);
    port = await listenOnLoopback(t.app);
    token = await t.token({ subject: 'sender' });
  });
  afterAll(() => t.close());

  const head = (extra: string, path = '/plants', method = 'POST', auth = true) =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    (auth ? `Authorization: Bearer ${token}\r\n` : '') +
    `Content-Type: application/json\r\n${extra}\r\n`;

  function expectRefusedEarly(res: StreamedExchange, status: number): void {
    expect(res.status).toBe(status);
    expect(res.headers).toMatch(/\r\ncontent-type: application\/json/i);
    expect(res.headers).toMatch(/\r\nconnection: close/i);
    expect(JSON.parse(res.body)).toEqual({ error: status, message: expect.any(String) });
    expect(res.closed).toBe(true);
  }

  it('answers an endless chunked body with 413 once the cap is passed, then closes the connection', async () => {
    const piece = chunked(Buffer.alloc(4 * KIB, 0x20));
    const res = await streamBody(port, head('Transfer-Encoding: chunked\r\n'), () => piece);
    expectRefusedEarly(res, 413);
    // The answer comes after the cap, not after the body: what a client had in flight at most.
    expect(res.sentBeforeAnswer).toBeLessThan(8 * MIB);
  });

  it.each([
    ['gzip', () => createGzip({ level: 9 })],
    ['deflate', () => createDeflate({ level: 9 })],
  ])(
    'answers an endless %s stream with 413 as it passes the cap, never inflating it to the end',
    async (coding, make) => {
      // Spaces compress about a thousandfold: the decoded body passes the cap long before the wire
      // does. The stream is the encoder's first flushed block, then its second one over and over
      // (valid: every block refers only to spaces before it).
      const encoder = make();
      const block = async () => {
        encoder.write(Buffer.alloc(MIB, 0x20));
        await new Promise<void>((resolve) => encoder.flush(constants.Z_SYNC_FLUSH, () => resolve()));
        return chunked(encoder.read() as Buffer);
      };
      const [first, next] = [await block(), await block()];
      let sent = 0;
      const res = await streamBody(port, head(`Transfer-Encoding: chunked\r\nContent-Encoding: ${coding}\r\n`), () =>
        sent++ === 0 ? first : next,
      );
      expectRefusedEarly(res, 413);
      expect(res.sentBeforeAnswer).toBeLessThan(8 * MIB);
    },
  );

  it('answers a compressed stream that decodes to nothing with 413 once its bytes on the wire pass the cap', async () => {
    // Empty gzip members, one after another: decoding them yields no byte, ever.
    const emptyMember = chunked(gzipSync(Buffer.alloc(0)));
    const res = await streamBody(
      port,
      head('Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n'),
      () => emptyMember,
    );
    expectRefusedEarly(res, 413);
    expect(res.sentBeforeAnswer).toBeLessThan(8 * MIB);
  });

  it.each(['identity', 'gzip', 'deflate', 'br'])(
    'answers a declared Content-Length over the cap with 413 at once, whatever the encoding (%s)',
    async (coding) => {
      const res = await streamBody(
        port,
        head(`Content-Length: ${100 * MIB}\r\nContent-Encoding: ${coding}\r\n`),
        () => Buffer.alloc(KIB, 0x20),
        { maxBytes: 100 * MIB },
      );
      expectRefusedEarly(res, 413);
      expect(res.sentBeforeAnswer).toBeLessThan(8 * MIB);
    },
  );

  it('answers Expect: 100-continue with a Content-Length over the cap with 413, never 100 Continue', async () => {
    // The client waits for 100 Continue before sending anything: the answer must come without it.
    const res = await waitForAnswer(port, head(`Content-Length: ${1 * MIB}\r\nExpect: 100-continue\r\n`));
    expect(res.interim).toBeUndefined();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ error: 413, message: expect.any(String) });
  });

  it('sends 100 Continue for a body within the cap, once the caller is authenticated, and creates the plant', async () => {
    const body = '{"id":100,"name":"Continued"}';
    const res = await waitForAnswer(port, head(`Content-Length: ${body.length}\r\nExpect: 100-continue\r\n`), (text) =>
      text.startsWith('HTTP/1.1 100 Continue') ? body : null,
    );
    expect(res.interim).toBe('HTTP/1.1 100 Continue');
    expect(res.status).toBe(200);
    expect(exactBody(res.body)).toEqual(expectedPlant({ id: 100n, name: 'Continued' }));
  });

  it('refuses a caller without a token before reading its body: 401 for a malformed body, without 100 Continue', async () => {
    const res = await waitForAnswer(
      port,
      head(`Content-Length: 7\r\nExpect: 100-continue\r\n`, '/plants', 'POST', false),
    );
    expect(res.status).toBe(401);
    expect(res.interim).toBeUndefined();
    const malformed = await rawRequest(port, {
      method: 'POST',
      path: '/plants',
      headers: { 'Content-Type': 'text/plain' },
      body: '{"id":',
    });
    expectCleanError({ ...malformed, headers: malformed.headers as Record<string, unknown> }, [401]);
  });

  describe('a refused body that is still arriving', () => {
    const body = Buffer.alloc(MB, 0x20);
    const pieces = (size: number) =>
      Array.from({ length: Math.ceil(body.length / size) }, (_, i) => body.subarray(i * size, (i + 1) * size));
    const byLength = () => ({ head: head(`Content-Length: ${body.length}\r\n`), pieces: pieces(64 * KIB) });
    const byChunks = () => ({
      head: head('Transfer-Encoding: chunked\r\n'),
      pieces: [...pieces(64 * KIB).map(chunked), Buffer.from('0\r\n\r\n')],
    });

    it('lets every one of many clients at once finish sending, then read its 413 and a clean close (Content-Length and chunked)', async () => {
      // Eight clients, each sending its bodies one after another, as many clients do: the whole
      // request first, the answer read after it. Closing at once, with their bytes unread, would
      // reset the connection under them before they read the 413.
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          const mine: SentWhole[] = [];
          for (let i = 0; i < 6; i++)
            mine.push(await sendWholeThenRead(port, (i + client) % 2 ? byChunks() : byLength()));
          return mine;
        }),
      );
      const all = outcomes.flat();
      expect(all.filter((outcome) => outcome.error !== undefined || outcome.status !== 413)).toEqual([]);
      for (const outcome of all) {
        expect(JSON.parse(outcome.body)).toEqual({ error: 413, message: new BodyTooLarge().message });
        expect(outcome.closed).toBe(true);
      }
    }, 60_000);

    it.each([
      ['a Content-Length it never reaches', () => head(`Content-Length: ${GIB}\r\n`), Buffer.alloc(64 * KIB, 0x20)],
      ['chunks that never end', () => head('Transfer-Encoding: chunked\r\n'), chunked(Buffer.alloc(64 * KIB, 0x20))],
    ])(
      'cuts off a client that never stops sending (%s) once LINGER_MAX_BYTES more have come',
      async (_, request, piece) => {
        const res = await sendEndlessly(port, request(), piece);
        expect(res.status).toBe(413);
        expect(res.cutOff).toBe(true);
        // Read by the service, or still in the kernels' buffers between the two when it cut.
        expect(res.sentAfterAnswer).toBeLessThan(LINGER_MAX_BYTES + IN_FLIGHT_BYTES);
        expect(res.msAfterAnswer).toBeLessThan(LINGER_MAX_MS);
      },
    );
  });

  it('answers an unknown route at once and closes the connection instead of reading an endless body', async () => {
    const piece = chunked(Buffer.alloc(4 * KIB, 0x20));
    const res = await streamBody(port, head('Transfer-Encoding: chunked\r\n', '/nowhere'), () => piece);
    expectRefusedEarly(res, 404);
    expect(res.sentBeforeAnswer).toBeLessThan(8 * MIB);
  });

  it('ignores a body sent with GET or DELETE, of any type (routes without a body read none)', async () => {
    const list = await t.http().get('/plants').set(bearer(token)).set('Content-Type', 'text/plain').send('not json');
    expect(list.status).toBe(200);
    const live = await t.http().get('/health/live').set('Content-Type', 'text/plain').send('x');
    expect(live.status).toBe(200);
    await t.http().post('/plants').set(bearer(token)).send({ id: 7, name: 'Gone soon' }).expect(200);
    const removed = await t
      .http()
      .delete('/plants/7')
      .set(bearer(token))
      .set('Content-Type', 'application/xml')
      .send('<x/>');
    expect(removed.status).toBe(204);
  });
});

interface SentWhole {
  status: number;
  body: string;
  /** Why the connection failed under the client (EPIPE, ECONNRESET), if it did. */
  error?: string;
  /** Whether the server closed the connection after the answer, cleanly. */
  closed: boolean;
}

/**
 * A client that never stops sending its body, whatever comes back: how much it could still write
 * after the answer arrived, and for how long, before the server cut the connection.
 */
function sendEndlessly(
  port: number,
  head: string,
  piece: Buffer,
  { maxBytes = GIB, timeoutMs = LINGER_MAX_MS + 5000 } = {},
): Promise<{ status: number; cutOff: boolean; sentAfterAnswer: number; msAfterAnswer: number }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let sent = 0;
    let answeredAt: { sent: number; at: number } | undefined;
    const finish = (cutOff: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0),
        cutOff,
        sentAfterAnswer: answeredAt === undefined ? Infinity : sent - answeredAt.sent,
        msAfterAnswer: answeredAt === undefined ? Infinity : Date.now() - answeredAt.at,
      });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (data: Buffer) => {
      answeredAt ??= { sent, at: Date.now() };
      answer += data.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
    void (async () => {
      socket.write(head);
      while (!socket.destroyed && sent < maxBytes) {
        // Counted once the kernel has taken it.
        const written = socket.write(piece, (error) => error || (sent += piece.length));
        if (!written) await new Promise((next) => socket.once('drain', next).once('close', next));
      }
      if (sent >= maxBytes) finish(false);
    })();
  });
}

/**
 * A client that writes its whole request (head, then `pieces`) before it looks at the answer, and
 * goes on writing when the server closes its side, as HTTP clients do; then it reads the answer and
 * closes too. A reset while it sends or reads is its `error`: such a client never sees the answer.
 */
function sendWholeThenRead(
  port: number,
  { head, pieces }: { head: string; pieces: Buffer[] },
  timeoutMs = 30_000,
): Promise<SentWhole> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let error: string | undefined;
    let sent = false;
    let serverEnded = false;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const end = answer.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0),
        body: end < 0 ? '' : answer.slice(end + 4),
        error,
        closed,
      });
    };
    const closeOnceDone = () => sent && serverEnded && socket.end();
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    socket.on('end', () => ((serverEnded = true), closeOnceDone()));
    socket.on('error', (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message));
    socket.on('close', () => finish(error === undefined));
    void (async () => {
      for (const piece of [Buffer.from(head), ...pieces]) {
        if (socket.destroyed) return;
        if (!socket.write(piece)) await new Promise((next) => socket.once('drain', next).once('close', next));
        // At the pace of a network slower than loopback: the body is still arriving after the answer.
        await new Promise((next) => setTimeout(next, 1));
      }
      sent = true;
      closeOnceDone();
    })();
  });
}

interface Answer {
  interim?: string;
  status: number;
  headers: string;
  body: string;
}

/**
 * Sends a request head and waits for its final answer (complete by Content-Length). `onInterim`
 * sees the text received so far and may return a body to send (after `100 Continue`).
 */
function waitForAnswer(port: number, head: string, onInterim?: (text: string) => string | null): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let bodySent = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer; received ${JSON.stringify(text.slice(0, 200))}`));
    }, 10_000);
    socket.on('error', () => undefined);
    socket.on('data', (data: Buffer) => {
      text += data.toString('latin1');
      if (onInterim && !bodySent) {
        const body = onInterim(text);
        if (body !== null) {
          bodySent = true;
          socket.write(body);
        }
      }
      let rest = text;
      let interim: string | undefined;
      if (rest.startsWith('HTTP/1.1 100')) {
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) return;
        interim = rest.slice(0, end);
        rest = rest.slice(end + 4);
      }
      const end = rest.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = rest.slice(0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
      const body = rest.slice(end + 4);
      if (Buffer.byteLength(body, 'latin1') < length) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        interim,
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0),
        headers,
        body: body.slice(0, length),
      });
    });
    socket.write(head);
  });
}
