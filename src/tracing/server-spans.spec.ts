import { Span, TextMapPropagator, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  Sampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { EventEmitter } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { finishServerSpan, nameByRoute, serverSpans, startAttributes, urlAttributes } from './server-spans';

const TOKEN = `pst_${'A'.repeat(43)}`;

describe(urlAttributes.name, () => {
  it.each([
    ['/plants', { 'url.path': '/plants' }],
    ['/plants?limit=20&after=5', { 'url.path': '/plants', 'url.query': 'limit=20&after=5' }],
    ['/plants?', { 'url.path': '/plants' }],
    [`/x/${TOKEN}?access_token=${TOKEN}`, { 'url.path': '/x/[redacted]', 'url.query': 'access_token=[redacted]' }],
  ])('%s', (url, expected) => {
    expect(urlAttributes(url)).toEqual(expected);
  });
});

describe(nameByRoute.name, () => {
  const fakeSpan = () => ({ setAttribute: jest.fn(), updateName: jest.fn() });

  it('names the span by the route template and records it', () => {
    const span = fakeSpan();
    const request = { method: 'DELETE', route: { path: '/plants/:id' } } as unknown as IncomingMessage;
    nameByRoute(span as unknown as Span, request);
    expect(span.updateName).toHaveBeenCalledWith('DELETE /plants/{id}');
    expect(span.setAttribute).toHaveBeenCalledWith('http.route', '/plants/{id}');
  });

  it('leaves a request that matched no route as it is (the method alone)', () => {
    const span = fakeSpan();
    nameByRoute(span as unknown as Span, { method: 'GET' } as IncomingMessage);
    expect(span.updateName).not.toHaveBeenCalled();
    expect(span.setAttribute).not.toHaveBeenCalled();
  });
});

describe(startAttributes.name, () => {
  const requestWith = (headers: Record<string, string>, url = '/plants') =>
    ({
      method: 'GET',
      httpVersion: '1.1',
      url,
      headers,
      socket: { remoteAddress: '192.0.2.4', remotePort: 50123 },
    }) as unknown as IncomingMessage;

  it('takes the client from the socket and the server from the Host header, not from forwarding headers', () => {
    const forged = {
      host: 'plants.example.com:8080',
      'x-forwarded-for': '203.0.113.77',
      'x-forwarded-host': 'forged.example',
      forwarded: 'for=anything;host=forged.example',
    };
    expect(startAttributes(requestWith(forged))).toEqual({
      'http.request.method': 'GET',
      'url.scheme': 'http',
      'url.path': '/plants',
      'client.address': '192.0.2.4',
      'network.peer.address': '192.0.2.4',
      'network.peer.port': 50123,
      'network.protocol.version': '1.1',
      'server.address': 'plants.example.com',
      'server.port': 8080,
    });
  });

  it.each([
    ['[::1]:3000', '::1', 3000],
    ['[::1]', '::1', undefined],
    ['plants.example.com', 'plants.example.com', undefined],
    ['plants.example.com:x', 'plants.example.com', undefined],
  ])('reads the Host header %s', (host, address, port) => {
    const attributes = startAttributes(requestWith({ host }));
    expect(attributes['server.address']).toBe(address);
    expect(attributes['server.port']).toBe(port);
  });

  it('records no server address from a Forwarded header when there is no Host header', () => {
    const attributes = startAttributes(requestWith({ forwarded: 'host=forged.example' }));
    expect(attributes).not.toHaveProperty('server.address');
    expect(JSON.stringify(attributes)).not.toContain('forged');
  });

  it('redacts a token in the URL, the Host header or the User-Agent', () => {
    expect(
      startAttributes(
        requestWith({ host: `${TOKEN}.example`, 'user-agent': `cli/1 ${TOKEN}` }, `/x/${TOKEN}?t=${TOKEN}`),
      ),
    ).toMatchObject({
      'url.path': '/x/[redacted]',
      'url.query': 't=[redacted]',
      'server.address': '[redacted].example',
      'user_agent.original': 'cli/1 [redacted]',
    });
  });
});

describe(finishServerSpan.name, () => {
  const fakeSpan = () => ({ setAttribute: jest.fn(), setStatus: jest.fn(), updateName: jest.fn(), end: jest.fn() });

  it("sets the client address the log line and the rate limit use: Express's req.ip once it has the request", () => {
    const span = fakeSpan();
    const request = {
      method: 'GET',
      headers: { 'x-forwarded-for': '203.0.113.77' },
      socket: { remoteAddress: '127.0.0.1' },
      // What Express's req.ip gives when TRUST_PROXY trusts the socket's address.
      ip: '203.0.113.77',
      route: { path: '/plants' },
    } as unknown as IncomingMessage;
    finishServerSpan(span as unknown as Span, request, { statusCode: 200 } as ServerResponse);
    expect(span.setAttribute).toHaveBeenCalledWith('client.address', '203.0.113.77');
    expect(span.setAttribute).toHaveBeenCalledWith('http.response.status_code', 200);
    expect(span.updateName).toHaveBeenCalledWith('GET /plants');
    expect(span.setStatus).not.toHaveBeenCalled();
    expect(span.end).toHaveBeenCalled();
  });

  it("marks a 5xx as failed, with the status as error.type; a 4xx is the client's", () => {
    const request = { method: 'GET', headers: {}, socket: {} } as unknown as IncomingMessage;
    const failed = fakeSpan();
    finishServerSpan(failed as unknown as Span, request, { statusCode: 503 } as ServerResponse);
    expect(failed.setAttribute).toHaveBeenCalledWith('error.type', '503');
    expect(failed.setStatus).toHaveBeenCalledWith({ code: 2 });
    const refused = fakeSpan();
    finishServerSpan(refused as unknown as Span, request, { statusCode: 404 } as ServerResponse);
    expect(refused.setStatus).not.toHaveBeenCalled();
  });
});

/** A caller's span and sampling decision, read from a W3C traceparent as the SDK's propagator reads it. */
const traceparentReader: TextMapPropagator<Record<string, string>> = {
  extract(parent, carrier) {
    const caller = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/.exec(carrier.traceparent ?? '');
    if (caller === null) return parent;
    return trace.setSpanContext(parent, {
      traceId: caller[1],
      spanId: caller[2],
      traceFlags: Number(caller[3]),
      isRemote: true,
    });
  },
  inject: () => undefined,
  fields: () => ['traceparent'],
};

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const exchange = (url: string, headers: Record<string, string> = {}) => {
  const req = Object.assign(new EventEmitter(), {
    method: 'GET',
    url,
    httpVersion: '1.1',
    headers: { host: 'localhost:3000', ...headers },
    socket: { remoteAddress: '127.0.0.1', remotePort: 50000 },
  }) as unknown as IncomingMessage;
  const res = Object.assign(new EventEmitter(), { statusCode: 200 }) as unknown as ServerResponse;
  return { req, res };
};
/** What the handler saw: the active span, and how many listeners the response had. */
const handled = (url: string, headers?: Record<string, string>) => {
  const { req, res } = exchange(url, headers);
  let seen: { span: Span | undefined; closeListeners: number } | undefined;
  serverSpans(() => (seen = { span: trace.getActiveSpan(), closeListeners: res.listenerCount('close') }))(req, res);
  res.emit('close');
  return seen!;
};

/** `provider` as the global tracer provider for the tests of a describe, with a context manager and the traceparent reader. */
function installedWhileDescribed(provider: TracerProvider): void {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(traceparentReader);
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  });
}

describe(serverSpans.name, () => {
  const exporter = new InMemorySpanExporter();
  /** Samples what the caller sampled, and nothing that comes without a caller. */
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });

  installedWhileDescribed(provider);
  beforeEach(() => exporter.reset());

  it("makes a sampled request's span active for its handler and ends it with the response", () => {
    const seen = handled('/plants?limit=5', { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(seen.span?.spanContext().traceId).toBe(traceId);
    const [span] = exporter.getFinishedSpans();
    expect(span).toMatchObject({
      name: 'GET',
      parentSpanContext: expect.objectContaining({ spanId: '00f067aa0ba902b7' }),
    });
    expect(span.attributes).toMatchObject({
      'url.path': '/plants',
      'url.query': 'limit=5',
      'http.response.status_code': 200,
    });
  });

  it('does nothing for a request the sampler drops: no span active, no listener, nothing exported', () => {
    const unsampledCaller: Record<string, string> = { traceparent: `00-${traceId}-00f067aa0ba902b7-00` };
    for (const headers of [{}, unsampledCaller]) {
      expect(handled('/plants', headers)).toEqual({ span: undefined, closeListeners: 0 });
    }
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('does not trace the probes, whatever the caller sampled', () => {
    expect(handled('/health/ready', { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }).span).toBeUndefined();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe(`${serverSpans.name} with a parent-based ratio sampler`, () => {
  const exporter = new InMemorySpanExporter();
  /** Parent-based with a ratio that is changed per test: 0 keeps no new trace, 1 keeps every one. */
  let ratio: Sampler = new TraceIdRatioBasedSampler(0);
  const sampler = new ParentBasedSampler({ root: { shouldSample: (...args) => ratio.shouldSample(...args) } });
  const provider = new TracerProvider({
    sampler,
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });

  installedWhileDescribed(provider);
  beforeEach(() => {
    exporter.reset();
    jest.restoreAllMocks();
  });
  const served = handled;

  it('traces nothing of a request without trace headers that the sampler drops', () => {
    ratio = new TraceIdRatioBasedSampler(0);
    const asked = jest.spyOn(sampler, 'shouldSample');
    expect(served('/plants')).toEqual({ span: undefined, closeListeners: 0 });
    expect(asked).toHaveBeenCalledTimes(1);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("traces a request whose traceparent has its sampled flag set, even at ratio 0, in the caller's trace", () => {
    ratio = new TraceIdRatioBasedSampler(0);
    const seen = served('/plants', { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(seen.span?.spanContext().traceId).toBe(traceId);
    const [span] = exporter.getFinishedSpans();
    expect(span).toMatchObject({
      name: 'GET',
      parentSpanContext: expect.objectContaining({ traceId, spanId: '00f067aa0ba902b7' }),
    });
  });

  it('does not trace a request whose caller did not sample, even at ratio 1 (parent-based)', () => {
    ratio = new TraceIdRatioBasedSampler(1);
    expect(served('/plants', { traceparent: `00-${traceId}-00f067aa0ba902b7-00` }).span).toBeUndefined();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('starts the trace of a request it keeps on the trace id the sampler decided on', () => {
    ratio = new TraceIdRatioBasedSampler(1);
    const asked = jest.spyOn(sampler, 'shouldSample');
    const seen = served('/plants?limit=5');
    const decidedOn = asked.mock.calls[0][1];
    expect(seen.span?.spanContext().traceId).toBe(decidedOn);
    const [span] = exporter.getFinishedSpans();
    expect(span.spanContext().traceId).toBe(decidedOn);
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.attributes).toMatchObject({ 'url.path': '/plants', 'url.query': 'limit=5' });
  });

  it('does not trace the probes, and does not ask the sampler about them', () => {
    ratio = new TraceIdRatioBasedSampler(1);
    const asked = jest.spyOn(sampler, 'shouldSample');
    expect(served('/health/live').span).toBeUndefined();
    expect(asked).not.toHaveBeenCalled();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
