import { AsyncLocalStorage } from 'node:async_hooks';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { serialisingUnsafePipelines } from './pipelined-requests';

/** Writes the requests on one connection at once and resolves with the status lines of the first `count` answers. */
function pipeline(port: number, requests: string[], count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`fewer than ${count} answers within 5 s: ${JSON.stringify(text)}`));
    }, 5000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      // The answers have no body: each ends with its blank line.
      const answers = text.split('\r\n\r\n').slice(0, -1);
      if (answers.length >= count) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answers.map((answer) => answer.split('\r\n')[0]));
      }
    });
    socket.on('error', reject);
    socket.write(requests.join(''));
  });
}

const request = (method: string, path: string, body = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe(serialisingUnsafePipelines.name, () => {
  let server: Server;
  let port: number;
  let events: string[];
  /** What each request's handler found in the async context its request arrived in. */
  const arrival = new AsyncLocalStorage<string>();
  let contexts: Map<string, string | undefined>;
  /** Requests the handler holds until the test releases them. */
  let held: Map<string, () => void>;
  let onHeld: () => void;

  beforeEach(async () => {
    events = [];
    contexts = new Map();
    held = new Map();
    onHeld = () => undefined;
    const dispatch = serialisingUnsafePipelines((req: IncomingMessage, res: ServerResponse) => {
      const name = `${req.method} ${req.url}`;
      contexts.set(name, arrival.getStore());
      events.push(`start ${name}`);
      held.set(name, () => {
        held.delete(name);
        events.push(`end ${name}`);
        res.end();
      });
      onHeld();
    });
    // As a tracing span would be entered for each request as it arrives.
    server = createServer((req, res) => arrival.run(`${req.method} ${req.url}`, dispatch, req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Answers each request soon after it starts. */
  function releaseEach(): void {
    onHeld = () => setImmediate(() => [...held.values()].forEach((release) => release()));
  }

  it('runs an unsafe request that follows another on the connection only once the first has answered', async () => {
    releaseEach();
    const answers = await pipeline(
      port,
      [request('POST', '/a', '{}'), request('DELETE', '/a'), request('GET', '/a')],
      3,
    );
    expect(answers).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    expect(events).toEqual([
      'start POST /a',
      'end POST /a',
      'start DELETE /a',
      'end DELETE /a',
      'start GET /a',
      'end GET /a',
    ]);
  });

  it('runs a request that waited for its turn in the async context it arrived in', async () => {
    releaseEach();
    await pipeline(port, [request('POST', '/a', '{}'), request('DELETE', '/b')], 2);
    expect(contexts).toEqual(
      new Map([
        ['POST /a', 'POST /a'],
        ['DELETE /b', 'DELETE /b'],
      ]),
    );
  });

  it('holds a safe request behind an unsafe one still running', async () => {
    releaseEach();
    await pipeline(port, [request('DELETE', '/a'), request('GET', '/b'), request('HEAD', '/c')], 3);
    expect(events.indexOf('start GET /b')).toBeGreaterThan(events.indexOf('end DELETE /a'));
  });

  it('holds an unsafe request behind safe ones still running', async () => {
    releaseEach();
    await pipeline(port, [request('GET', '/a'), request('POST', '/b', '{}')], 2);
    expect(events.indexOf('start POST /b')).toBeGreaterThan(events.indexOf('end GET /a'));
  });

  it('still runs pipelined safe requests side by side', async () => {
    // Both GETs are held until both have started: only parallel processing answers them.
    onHeld = () => {
      if (events.length === 2) [...held.values()].forEach((release) => release());
    };
    const answers = await pipeline(port, [request('GET', '/a'), request('GET', '/b')], 2);
    expect(answers).toHaveLength(2);
    expect(events.slice(0, 2)).toEqual(['start GET /a', 'start GET /b']);
  });
});
