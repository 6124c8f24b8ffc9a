import { connect } from 'node:net';
import { prepareDatabase } from './utils/databases';
import { ServiceProcess, createTokenWithCli, startServiceProcess } from './utils/service-process';
import { waitFor } from './utils/wait-for';

/**
 * The request log as an operator reads it: the service's own process, JSON lines on stdout, one per
 * request, with the request id, and never a credential.
 */
describe('Request logs', () => {
  let service: ServiceProcess;
  let env: Record<string, string>;
  let token: string;

  beforeAll(async () => {
    env = (await prepareDatabase('sqlite')).env;
    token = await createTokenWithCli(env, 'log-reader');
    service = await startServiceProcess(env);
  }, 90_000);
  afterAll(() => service?.stop());

  const linesOf = (requestId: string) => service.logLines().filter((line) => line.requestId === requestId);

  let barriers = 0;
  /**
   * The lines of one request once all are written: when the line of a later request (an
   * unauthenticated call, logged at info) has come out, any second line for this one would have too.
   */
  async function waitForLine(requestId: string): Promise<Record<string, unknown>[]> {
    await waitFor(() => linesOf(requestId).length > 0, { timeoutMs: 5000, what: `a log line for ${requestId}` });
    const barrier = `barrier-${++barriers}`;
    await fetch(`${service.url}/plants`, { headers: { 'X-Request-Id': barrier } });
    await waitFor(() => linesOf(barrier).length > 0, { timeoutMs: 5000, what: `a log line for ${barrier}` });
    return linesOf(requestId);
  }

  it('writes one JSON line per request with method, route, status, duration, request id and subject', async () => {
    const res = await fetch(`${service.url}/plants?limit=5`, {
      headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'trace-0001' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-0001');

    const lines = await waitForLine('trace-0001');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'GET /plants 200',
      requestId: 'trace-0001',
      method: 'GET',
      route: '/plants',
      path: '/plants',
      status: 200,
      durationMs: expect.any(Number),
      subject: 'log-reader',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('logs the route template, never one route per id', async () => {
    const res = await fetch(`${service.url}/plants/4242`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'trace-0002' },
    });
    expect(res.status).toBe(404);
    const [line] = await waitForLine('trace-0002');
    expect(line).toMatchObject({ route: '/plants/{id}', path: '/plants/4242', status: 404, subject: 'log-reader' });
  });

  it('generates a request id when the client sends none or an unusable one, and logs it', async () => {
    for (const sent of [undefined, 'x'.repeat(129), 'has space']) {
      const res = await fetch(`${service.url}/plants`, {
        headers: { Authorization: `Bearer ${token}`, ...(sent === undefined ? {} : { 'X-Request-Id': sent }) },
      });
      const id = res.headers.get('x-request-id') ?? '';
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(await waitForLine(id)).toHaveLength(1);
    }
  });

  it('never writes a token, an Authorization header or a query string', async () => {
    const wrong = `pst_${'Q'.repeat(43)}`;
    await fetch(`${service.url}/plants?after=1&note=query-secret-value`, {
      headers: { Authorization: `Bearer ${wrong}`, 'X-Request-Id': 'trace-0003' },
    });
    await fetch(`${service.url}/plants`, { headers: { Authorization: `Bearer ${token}` } });
    const [line] = await waitForLine('trace-0003');
    expect(line).toMatchObject({ status: 401, subject: null, path: '/plants' });

    const output = service.output();
    expect(output).not.toContain(token);
    expect(output).not.toContain(token.slice(4, 24));
    expect(output).not.toContain(wrong);
    expect(output).not.toMatch(/bearer/i);
    expect(output).not.toContain('query-secret-value');
  });

  it('redacts a token pasted into the path, in the line and in the answer', async () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsb2ctcmVhZGVyIn0.c2lnbmF0dXJlLXBhcnQ';
    const sent = [
      ['trace-0101', `/plants/${token}`],
      ['trace-0102', `/plants/${token}%zz`],
      ['trace-0103', `/plants/${jwt}`],
    ];
    for (const [id, path] of sent) {
      const res = await fetch(`${service.url}${path}`, {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': id },
      });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).not.toContain(token.slice(4, 24));
      expect(text).not.toContain(jwt.slice(0, 20));
    }
    for (const [id] of sent) {
      const [line] = await waitForLine(id);
      expect(String(line.path)).toMatch(/^\/plants\/\[redacted\]/);
    }
    const output = service.output();
    expect(output).not.toContain(token.slice(4, 24));
    expect(output).not.toContain(jwt.slice(0, 20));
  });

  it('logs a request whose client left before the answer as 499, with the client address', async () => {
    const { hostname, port } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const continued = new Promise((resolve) => socket.once('data', resolve));
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: trace-0201\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n',
    );
    // 100 Continue: the service has the request and waits for its body; half of it comes, then nothing.
    expect(String(await continued)).toMatch(/^HTTP\/1.1 100 /);
    socket.write('{"id":');
    socket.destroy();
    const [line] = await waitForLine('trace-0201');
    expect(line).toMatchObject({
      level: 'warn',
      method: 'POST',
      path: '/plants',
      status: 499,
      client: '127.0.0.1',
      msg: expect.stringContaining('aborted'),
    });
  });

  it('logs the socket address as the client, whatever X-Forwarded-For says, without TRUST_PROXY', async () => {
    await fetch(`${service.url}/plants`, {
      headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'trace-0301', 'X-Forwarded-For': '198.51.100.7' },
    });
    const [line] = await waitForLine('trace-0301');
    expect(line).toMatchObject({ status: 200, client: '127.0.0.1' });
  });

  it('writes every line as JSON with a level and a time', () => {
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(parsed).toEqual(
        expect.objectContaining({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) }),
      );
    }
  });
});

describe('Log settings', () => {
  it('TRUST_PROXY: the client is the address the trusted proxy forwarded', async () => {
    const env = (await prepareDatabase('sqlite')).env;
    const token = await createTokenWithCli(env, 'proxied');
    const proxied = await startServiceProcess({ ...env, TRUST_PROXY: 'loopback' });
    try {
      for (const [id, forwarded] of [
        ['proxied-1', '198.51.100.7'],
        ['proxied-2', undefined],
      ] as const) {
        await fetch(`${proxied.url}/plants`, {
          headers: {
            Authorization: `Bearer ${token}`,
            'X-Request-Id': id,
            ...(forwarded ? { 'X-Forwarded-For': forwarded } : {}),
          },
        });
      }
      await waitFor(
        () => proxied.logLines().filter((line) => String(line.requestId).startsWith('proxied-')).length === 2,
        {
          timeoutMs: 5000,
          what: 'the lines of proxied-1 and proxied-2',
        },
      );
      const clientOf = (id: string) => proxied.logLines().find((line) => line.requestId === id)?.client;
      expect(clientOf('proxied-1')).toBe('198.51.100.7');
      expect(clientOf('proxied-2')).toBe('127.0.0.1');
    } finally {
      await proxied.stop();
    }
  }, 120_000);

  it('LOG_LEVEL=warn keeps request lines out; LOG_FORMAT=pretty writes readable lines', async () => {
    const env = (await prepareDatabase('sqlite')).env;
    const token = await createTokenWithCli(env, 'quiet');

    const quiet = await startServiceProcess({ ...env, LOG_LEVEL: 'warn' });
    try {
      expect(
        (
          await fetch(`${quiet.url}/plants`, {
            headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'quiet-1' },
          })
        ).status,
      ).toBe(200);
    } finally {
      await quiet.stop();
    }
    // The process has exited and its output is drained: a line for the request would be there.
    expect(quiet.output()).not.toContain('quiet-1');

    const pretty = await startServiceProcess({ ...env, LOG_FORMAT: 'pretty' });
    try {
      await fetch(`${pretty.url}/plants`, {
        headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'pretty-1' },
      });
      await waitFor(() => pretty.output().includes('pretty-1'), {
        timeoutMs: 5000,
        what: 'a pretty line for pretty-1',
      });
      const text = pretty.output();
      const line = text.split('\n').find((l) => l.includes('pretty-1')) ?? '';
      expect(line).toContain('GET /plants 200');
      expect(line.startsWith('{')).toBe(false);
      expect(text).not.toContain(token);
    } finally {
      await pretty.stop();
    }
  }, 120_000);
});
