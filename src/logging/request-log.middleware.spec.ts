import express from 'express';
import { EventEmitter, once } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { trace } from '@opentelemetry/api';
import { Principal } from '../auth/principal';
import { LogConfig, LogLevel } from '../config/configuration';
import * as tracing from '../tracing/tracing';
import { LogOutput } from './log-output';
import {
  REQUEST_ID_HEADER,
  RequestLogFields,
  RequestLogMiddleware,
  logRequest,
  requestIdFor,
  requestLineFields,
  requestLogFields,
  requestLogMessage,
} from './request-log.middleware';

/** A stdout stand-in that hands each line written to it to `take`. */
const collect = (take: (line: string) => void) =>
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) take(line);
      done();
    },
  });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SECRET = `pst_${'S'.repeat(43)}`;

interface FakeRequest {
  method?: string;
  url?: string;
  path?: string;
  headers: Record<string, string | string[] | undefined>;
  route?: { path: string };
  user?: Principal;
  ip?: string;
  socket?: { remoteAddress?: string };
}

function fakeResponse(statusCode = 200): ServerResponse & { setHeader: jest.Mock } {
  return { statusCode, writableFinished: true, setHeader: jest.fn() } as unknown as ServerResponse & {
    setHeader: jest.Mock;
  };
}

const asIncoming = (req: FakeRequest) => req as unknown as IncomingMessage;

describe(requestIdFor.name, () => {
  const idFor = (incoming: string | string[] | undefined) => {
    const res = fakeResponse();
    const id = requestIdFor(asIncoming({ headers: { 'x-request-id': incoming } }), res);
    return { id, res };
  };

  it.each([
    ['a UUID', '3f2c8e4a-0b1d-4c5e-9f6a-7b8c9d0e1f2a'],
    ['a short token', 'a'],
    ['visible ASCII punctuation', 'req-42_trace:abc/def.ghi~!@#$%^&*()'],
    ['128 characters', 'x'.repeat(128)],
  ])("keeps a client's id that is %s, and answers it", (_label, incoming) => {
    const { id, res } = idFor(incoming);
    expect(id).toBe(incoming);
    expect(res.setHeader).toHaveBeenCalledWith(REQUEST_ID_HEADER, incoming);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['129 characters', 'x'.repeat(129)],
    ['200 characters', 'y'.repeat(200)],
    ['non-ASCII', 'réquête-1'],
    ['an emoji', 'id-🌵'],
    ['containing a space', 'two words'],
    ['containing a tab', 'a\tb'],
    ['a control character', 'a\u0001b'],
    ['a header sent twice (an array)', ['a', 'b']],
    // Written in every line of the request: a token sent in the wrong header must not reach the log.
    ['a token', `pst_${'A'.repeat(43)}`],
    ['holding a JWT', 'req-eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
  ])('replaces an id that is %s with a new UUID, and answers that', (_label, incoming) => {
    const { id, res } = idFor(incoming);
    expect(id).toMatch(UUID);
    expect(id).not.toBe(incoming);
    expect(res.setHeader).toHaveBeenCalledTimes(1);
    expect(res.setHeader).toHaveBeenCalledWith(REQUEST_ID_HEADER, id);
  });

  it('makes a different id for each request', () => {
    expect(idFor(undefined).id).not.toBe(idFor(undefined).id);
  });
});

describe(requestLogFields.name, () => {
  const alice: Principal = { subject: 'alice', scopes: ['plants:read'], kind: 'pst', tokenId: 'token-1' };

  it('describes the request by method, route, path, status, duration, subject and client', () => {
    const req: FakeRequest = {
      method: 'DELETE',
      url: '/plants/123?limit=5',
      path: '/plants/123',
      headers: { authorization: `Bearer ${SECRET}` },
      route: { path: '/plants/:id' },
      user: alice,
      socket: { remoteAddress: '203.0.113.9' },
    };
    expect(requestLogFields(asIncoming({ ...req, id: 'trace-9' } as FakeRequest), fakeResponse(204), 12.5)).toEqual({
      requestId: 'trace-9',
      method: 'DELETE',
      route: '/plants/{id}',
      path: '/plants/123',
      status: 204,
      durationMs: 12.5,
      subject: 'alice',
      tokenKind: 'pst',
      client: '203.0.113.9',
    });
  });

  it.each([
    ['the socket address without X-Forwarded-For', {}, '203.0.113.9'],
    ['what Express takes from X-Forwarded-For (req.ip) with it', { 'x-forwarded-for': '198.51.100.7' }, '198.51.100.7'],
  ])('logs as the client %s', (_label, headers, client) => {
    const req: FakeRequest = {
      method: 'GET',
      url: '/plants',
      headers,
      socket: { remoteAddress: '203.0.113.9' },
      // What Express's req.ip gives when TRUST_PROXY trusts the socket's address.
      ip: '198.51.100.7',
    };
    expect(requestLogFields(asIncoming(req), fakeResponse(200), 1)).toMatchObject({ client });
  });

  it('never carries headers, query strings or bodies', () => {
    const req = {
      method: 'GET',
      url: '/plants?after=5&access_token=' + SECRET,
      path: '/plants',
      headers: { authorization: `Bearer ${SECRET}`, cookie: 'session=secret-cookie' },
      query: { after: '5', access_token: SECRET },
      body: { name: 'secret body' },
      route: { path: '/plants' },
      user: alice,
    };
    const fields = requestLogFields(asIncoming(req), fakeResponse(200), 3) as unknown as Record<string, unknown>;
    expect(Object.keys(fields).sort()).toEqual([
      'client',
      'durationMs',
      'method',
      'path',
      'requestId',
      'route',
      'status',
      'subject',
      'tokenKind',
    ]);
    const text = JSON.stringify(fields);
    for (const leak of [SECRET, 'access_token', 'after=5', '?', 'secret-cookie', 'secret body', 'Bearer']) {
      expect(text).not.toContain(leak);
    }
  });

  it('drops the query string when only the raw url is known', () => {
    const req: FakeRequest = { method: 'GET', url: `/plants?access_token=${SECRET}`, headers: {} };
    const fields = requestLogFields(asIncoming(req), fakeResponse(401), 1) as unknown as Record<string, unknown>;
    expect(fields.path).toBe('/plants');
    expect(JSON.stringify(fields)).not.toContain(SECRET);
  });

  it('logs null route and subject for an unmatched, anonymous request', () => {
    const req: FakeRequest = { method: 'GET', url: '/nowhere', path: '/nowhere', headers: {} };
    expect(requestLogFields(asIncoming(req), fakeResponse(404), 0.4)).toMatchObject({
      method: 'GET',
      route: null,
      path: '/nowhere',
      status: 404,
      subject: null,
      tokenKind: null,
    });
  });

  it('logs 499 for a response that never finished: the client closed the connection', () => {
    const res = { ...fakeResponse(200), writableFinished: false } as unknown as ServerResponse;
    expect(
      requestLogFields(asIncoming({ method: 'POST', url: '/plants', path: '/plants', headers: {} }), res, 1),
    ).toMatchObject({ status: 499 });
  });

  it('truncates a very long path', () => {
    const long = `/${'a'.repeat(10_000)}`;
    const fields = requestLogFields(
      asIncoming({ method: 'GET', url: long, path: long, headers: {} }),
      fakeResponse(404),
      1,
    ) as {
      path: string;
    };
    expect(fields.path.length).toBeLessThanOrEqual(201);
    expect(fields.path.length).toBeGreaterThanOrEqual(100);
    expect(long.startsWith(fields.path.replace(/…$/, ''))).toBe(true);
    expect(fields.path.endsWith('…')).toBe(true);
  });

  it.each([
    ['a token', `/plants/${SECRET}`, '/plants/[redacted]'],
    ['a token with text around it', `/x/a${SECRET}b/y`, '/x/a[redacted]/y'],
    ['a token cut short', '/plants/pst_abc-_9', '/plants/[redacted]'],
    ['a JWT', '/plants/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl/x', '/plants/[redacted]/x'],
    ['a JWT without a signature', '/eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.', '/[redacted]'],
    ['two tokens', `/${SECRET}/${SECRET}`, '/[redacted]/[redacted]'],
  ])('redacts %s in the path', (_label, path, logged) => {
    const fields = requestLogFields(
      asIncoming({ method: 'DELETE', url: path, path, headers: {} }),
      fakeResponse(404),
      1,
    );
    expect(fields).toMatchObject({ path: logged });
    expect(JSON.stringify(fields)).not.toContain(SECRET.slice(4));
  });

  it('redacts a token before truncating a long path', () => {
    const path = `/${'a'.repeat(195)}${SECRET}`;
    const fields = requestLogFields(
      asIncoming({ method: 'GET', url: path, path, headers: {} }),
      fakeResponse(404),
      1,
    ) as { path: string };
    expect(fields.path).not.toContain('pst_');
    expect(fields.path).not.toContain(SECRET.slice(4, 10));
  });

  it.each(['/plants/123', '/docs/swagger-ui.min.css', '/a.b.c', '/plants/eyJ', '/pst'])('keeps %s as it is', (path) => {
    expect(
      requestLogFields(asIncoming({ method: 'GET', url: path, path, headers: {} }), fakeResponse(404), 1),
    ).toMatchObject({ path });
  });

  it('keeps a path of ordinary length whole', () => {
    const path = `/plants/${'9'.repeat(19)}`;
    const fields = requestLogFields(
      asIncoming({ method: 'DELETE', url: path, path, headers: {} }),
      fakeResponse(404),
      1,
    );
    expect(fields).toMatchObject({ path });
  });
});

describe(requestLineFields.name, () => {
  const config = { level: 'debug', pretty: false } as const;
  let output: LogOutput;
  let written: string[];

  beforeEach(() => {
    output = new LogOutput(
      config,
      collect((line) => written.push(line)),
    );
    written = [];
    jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 10, 24, 1, 2, 3, 456));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    output.abandon();
  });

  const base: RequestLogFields = {
    requestId: '3f2c8e4a-0b1d-4c5e-9f6a-7b8c9d0e1f2a',
    method: 'GET',
    route: '/plants',
    path: '/plants',
    status: 200,
    durationMs: 1.234,
    subject: 'alice',
    tokenKind: 'pst',
    client: '203.0.113.9',
  };

  it.each([
    ['an ordinary request', base, 'GET /plants 200'],
    ['no route, no subject', { ...base, route: null, subject: null, tokenKind: null, status: 404 }, 'GET - 404'],
    ['a JWT', { ...base, subject: 'org-1', tokenKind: 'jwt' }, 'GET /plants 200'],
    ['a client that has gone', { ...base, client: undefined, status: 499 }, 'GET /plants aborted'],
    ['a template route', { ...base, method: 'DELETE', route: '/plants/{id}', status: 204 }, 'DELETE /plants/{id} 204'],
    [
      'quotes, backslashes and controls',
      { ...base, requestId: 'a"b\\c', path: '/x"\\\u0001\n', subject: 'é"🌵', client: '"::1"' },
      'GET /plants 200',
    ],
    [
      'every printable ASCII character',
      { ...base, path: String.fromCharCode(...Array.from({ length: 95 }, (_, i) => 32 + i)) },
      'GET /plants 200',
    ],
    ['a whole number of milliseconds', { ...base, durationMs: 3 }, 'GET /plants 200'],
    [
      'a traced request',
      { ...base, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' },
      'GET /plants 200',
    ],
    [
      'a traced request whose client has gone',
      {
        ...base,
        client: undefined,
        status: 499,
        trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
        span_id: '00f067aa0ba902b7',
      },
      'GET /plants aborted',
    ],
  ] as Array<[string, RequestLogFields, string]>)(
    'writes what pino writes for %s, byte for byte',
    (_label, fields, msg) => {
      expect(requestLogMessage(fields)).toBe(msg);
      output.logger.info(fields, msg);
      output.writeLine('info', fields, requestLineFields);
      output.flush();
      expect(written).toHaveLength(2);
      expect(written[1]).toBe(written[0]);
    },
  );
});

describe(RequestLogMiddleware.name, () => {
  function configWith(level: LogLevel): LogConfig {
    return { level, pretty: false };
  }

  const outputs: LogOutput[] = [];
  afterAll(() => outputs.forEach((output) => output.abandon()));

  /** The service's log output, its lines (pino's and the request lines) caught as they are written. */
  function outputInto(lines: Array<Record<string, unknown>>, level: LogLevel): LogOutput {
    const output = new LogOutput(
      configWith(level),
      collect((line) => lines.push(JSON.parse(line) as Record<string, unknown>)),
    );
    outputs.push(output);
    return output;
  }

  // Responses of the current app not yet closed; a line is written when its response closes.
  let inFlight = 0;
  let whenIdle: Array<() => void> = [];
  const arrivals = new EventEmitter();

  /** An Express app with the middleware in front, logging through the service's pino options into memory. */
  function appLoggingTo(lines: Array<Record<string, unknown>>, level: LogLevel = 'debug') {
    inFlight = 0;
    whenIdle = [];
    current = outputInto(lines, level);
    const middleware = new RequestLogMiddleware(current);
    const app = express();
    app.use('/', (req, res, next) => middleware.use(req, res, next));
    // After the middleware, so its 'close' listener has written the line when this one runs.
    app.use((_req, res, next) => {
      inFlight += 1;
      arrivals.emit('arrived');
      res.on('close', () => {
        inFlight -= 1;
        if (inFlight === 0) whenIdle.splice(0).forEach((done) => done());
      });
      next();
    });
    app.use((req, _res, next) => {
      (req as unknown as { user: Principal }).user = { subject: 'alice', scopes: [], kind: 'pst', tokenId: 't' };
      next();
    });
    app.get('/plants', (_req, res) => {
      res.status(200).json([]);
    });
    app.get('/health/live', (_req, res) => {
      res.status(200).json({ status: 'ok', info: {} });
    });
    app.get('/boom', (_req, res) => {
      res.status(503).json({ error: 503, message: 'down' });
    });
    app.post('/plants', (req) => {
      // A body reader that never gets the whole body: the client leaves first.
      req.resume();
    });
    app.get('/slow', (_req, res) => {
      // Slower than the client who leaves: the delay is what the aborted-request test needs.
      setTimeout(() => res.status(200).json([]), 300).unref();
    });
    return app;
  }

  /**
   * Lines are logged when the response closes, just after the client has it: until every one has,
   * then what waits is handed over.
   */
  let current: LogOutput | undefined;
  const settle = async () => {
    if (inFlight > 0) await new Promise<void>((resolve) => whenIdle.push(resolve));
    current?.flush();
    await new Promise((resolve) => setImmediate(resolve));
  };

  it('writes one line per request with the request id and the fields, and no credential', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const res = await request(appLoggingTo(lines))
      .get(`/plants?access_token=${SECRET}`)
      .set('Authorization', `Bearer ${SECRET}`)
      .set('Cookie', 'session=secret-cookie')
      .set('X-Request-Id', 'trace-1');
    await settle();
    expect(res.headers['x-request-id']).toBe('trace-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      requestId: 'trace-1',
      method: 'GET',
      route: '/plants',
      path: '/plants',
      status: 200,
      subject: 'alice',
      tokenKind: 'pst',
      msg: 'GET /plants 200',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(typeof lines[0].durationMs).toBe('number');
    expect(lines[0]).not.toHaveProperty('req');
    expect(lines[0]).not.toHaveProperty('res');
    const text = JSON.stringify(lines);
    for (const leak of [SECRET, 'access_token', 'secret-cookie']) expect(text).not.toContain(leak);
  });

  it('carries no trace fields while tracing is off', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const getActiveSpan = jest.spyOn(trace, 'getActiveSpan');
    await request(appLoggingTo(lines)).get('/plants');
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[0]).not.toHaveProperty('span_id');
    expect(getActiveSpan).not.toHaveBeenCalled();
    getActiveSpan.mockRestore();
  });

  it('carries the trace and span ids of the active server span while tracing is on', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const serverSpan = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
    const on = jest.spyOn(tracing, 'tracingOn').mockReturnValue(true);
    const active = jest.spyOn(trace, 'getActiveSpan').mockReturnValue(trace.wrapSpanContext(serverSpan));
    try {
      await request(appLoggingTo(lines)).get('/plants');
      await settle();
    } finally {
      on.mockRestore();
      active.mockRestore();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'GET /plants 200',
      trace_id: serverSpan.traceId,
      span_id: serverSpan.spanId,
    });
  });

  it('gives each request its own id and answers it', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = appLoggingTo(lines);
    const first = await request(app).get('/plants');
    const second = await request(app).get('/plants');
    await settle();
    const ids = [first.headers['x-request-id'], second.headers['x-request-id']];
    for (const id of ids) expect(id).toMatch(UUID);
    expect(ids[0]).not.toBe(ids[1]);
    expect(lines.map((line) => line.requestId)).toEqual(ids);
  });

  it('logs probes at debug and server errors at error', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = appLoggingTo(lines);
    await request(app).get('/health/live');
    await request(app).get('/boom');
    await settle();
    expect(lines.map((line) => [line.path, line.level])).toEqual([
      ['/health/live', 'debug'],
      ['/boom', 'error'],
    ]);
  });

  it('keeps probes out of the default info level', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = appLoggingTo(lines, 'info');
    await request(app).get('/health/live');
    await request(app).get('/plants');
    await settle();
    expect(lines.map((line) => line.path)).toEqual(['/plants']);
  });

  it.each([
    ['warn', ['/boom']],
    ['error', ['/boom']],
    ['silent', []],
  ] as Array<[LogLevel, string[]]>)('at %s writes only what that level allows', async (level, paths) => {
    const lines: Array<Record<string, unknown>> = [];
    const app = appLoggingTo(lines, level);
    await request(app).get('/health/live');
    await request(app).get('/plants');
    await request(app).get('/boom');
    await settle();
    expect(lines.map((line) => line.path)).toEqual(paths);
  });

  it('logs through the logger, with the same fields, when lines are not JSON text (development)', () => {
    const logger = { isLevelEnabled: () => true, info: jest.fn() };
    const output = { json: false, logger, writeLine: jest.fn() } as unknown as LogOutput;
    const req = { method: 'GET', url: '/plants', path: '/plants', headers: {}, id: 'r-1', route: { path: '/plants' } };
    logRequest(output, asIncoming(req), fakeResponse(200));
    expect(output.writeLine).not.toHaveBeenCalled();
    expect(logger.info).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: 'r-1', route: '/plants', status: 200 }),
      'GET /plants 200',
    );
  });

  it('logs a request whose client left before the answer at warn, as aborted', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const server = appLoggingTo(lines).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as { port: number };
      const client = new AbortController();
      const arrived = once(arrivals, 'arrived', { signal: AbortSignal.timeout(5000) });
      const sent = fetch(`http://127.0.0.1:${port}/slow`, {
        headers: { 'X-Request-Id': 'gone-1' },
        signal: client.signal,
      });
      await arrived;
      client.abort();
      await expect(sent).rejects.toThrow();
      await settle();
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'warn',
          requestId: 'gone-1',
          msg: 'GET /slow aborted',
          status: 499,
          route: '/slow',
          path: '/slow',
          client: '127.0.0.1',
        }),
      ]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('logs a request abandoned while its body was being sent as 499, with the client', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const server = appLoggingTo(lines).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as { port: number };
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      const arrived = once(arrivals, 'arrived', { signal: AbortSignal.timeout(5000) });
      socket.write('POST /plants HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-2\r\nContent-Length: 100\r\n\r\n{"id":');
      await arrived;
      socket.destroy();
      await settle();
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'warn',
          requestId: 'gone-2',
          method: 'POST',
          status: 499,
          path: '/plants',
          client: '127.0.0.1',
        }),
      ]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
