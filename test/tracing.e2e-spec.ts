import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { prepareDatabase, testDatabases } from './utils/databases';
import { builtModule } from './utils/service-build';
import { OtlpReceiver, ReceivedSpan, SPAN_KIND_CLIENT, SPAN_KIND_SERVER } from './utils/otlp-receiver';
import { ServiceProcess, createTokenWithCli, freePort, startServiceProcess } from './utils/service-process';
import { waitFor } from './utils/wait-for';

const ROOT = join(__dirname, '..');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Tracing on, exporting OTLP/JSON to `receiver` in batches sent every 50 ms. */
const tracingEnv = (receiver: OtlpReceiver, scheduleDelayMs = 50): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: 'plant-store-e2e',
  OTEL_BSP_SCHEDULE_DELAY: String(scheduleDelayMs),
});

/** A W3C traceparent of a caller's sampled span. */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const serverSpanOf = (spans: ReceivedSpan[]) => spans.find((span) => span.kind === SPAN_KIND_SERVER);

/** Every span under `root` in `spans`, at any depth. */
function descendantsOf(root: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const children = spans.filter((span) => span.parentSpanId === root.spanId);
  return children.flatMap((child) => [child, ...descendantsOf(child, spans)]);
}

describe.each(testDatabases())('traces (%s)', (database) => {
  const receiver = new OtlpReceiver();
  let service: ServiceProcess;
  let token: string;
  const subject = `tracer-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    await receiver.start();
    const env = { ...(await prepareDatabase(database)).env, REDIS_URL };
    token = await createTokenWithCli(env, subject);
    service = await startServiceProcess({ ...env, ...tracingEnv(receiver) });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await receiver.stop();
  });

  /** Sends a request as a traced caller and waits for its server span and everything under it. */
  async function tracedCall(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{
    status: number;
    caller: ReturnType<typeof callerContext>;
    server: ReceivedSpan;
    below: ReceivedSpan[];
    requestId: string;
  }> {
    const caller = callerContext();
    const requestId = randomUUID();
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        traceparent: caller.traceparent,
        'x-request-id': requestId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.arrayBuffer();
    await waitFor(() => serverSpanOf(receiver.inTrace(caller.traceId)) !== undefined, {
      what: `the server span of ${method} ${path}`,
    });
    const spans = receiver.inTrace(caller.traceId);
    const server = serverSpanOf(spans)!;
    // Child spans end before their server span, so they were exported in the same batch or before.
    return { status: res.status, caller, server, below: descendantsOf(server, spans), requestId };
  }

  const sqlSpans = (spans: ReceivedSpan[]) => spans.filter((span) => span.attributes['db.system.name'] !== 'redis');

  it("continues the caller's trace with a server span named by the route, its SQL statements under it", async () => {
    const id = 700_000_000_000 + Math.floor(Math.random() * 1e6);
    const created = await tracedCall('POST', '/plants', { id, name: 'Secret Fern Name', tag: 'secret-tag' });
    expect(created.status).toBe(200);
    expect(created.server).toMatchObject({
      traceId: created.caller.traceId,
      parentSpanId: created.caller.spanId,
      name: 'POST /plants',
      kind: SPAN_KIND_SERVER,
    });
    expect(created.server.attributes).toMatchObject({ 'http.route': '/plants', 'http.response.status_code': 200 });
    expect(created.server.resource['service.name']).toBe('plant-store-e2e');

    const statements = sqlSpans(created.below);
    expect(statements.map((span) => span.name)).toContain('INSERT plants');
    for (const span of statements) {
      expect(span.kind).toBe(SPAN_KIND_CLIENT);
      expect(span.parentSpanId).toBe(created.server.spanId);
      // mysql or mariadb, as DATABASE_URL's scheme says.
      expect(span.attributes['db.system.name']).toBe(
        database === 'sqlite' ? 'sqlite' : new URL(process.env.TEST_DATABASE_URL!).protocol.replace(':', ''),
      );
      expect(span.attributes['db.query.text']).toEqual(expect.stringContaining('?'));
    }

    const deleted = await tracedCall('DELETE', `/plants/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.server.name).toBe('DELETE /plants/{id}');
    expect(deleted.server.attributes['http.route']).toBe('/plants/{id}');
    const deletes = sqlSpans(deleted.below);
    expect(deletes.map((span) => span.name)).toContain('DELETE plants');

    // Neither the token, nor the body, nor a statement's parameters (the id, the owner) are exported.
    const exported = JSON.stringify([...created.below, created.server, ...deletes]);
    for (const secret of [token, 'Secret Fern Name', 'secret-tag', subject]) expect(exported).not.toContain(secret);
    expect(JSON.stringify([...created.below, ...deletes])).not.toContain(String(id));
  });

  it('records Redis commands of a request under its server span, by name only', async () => {
    const listed = await tracedCall('GET', '/plants?limit=5');
    expect(listed.status).toBe(200);
    expect(listed.server.name).toBe('GET /plants');
    expect(listed.server.attributes['url.query']).toBe('limit=5');
    const redis = listed.below.filter((span) => span.attributes['db.system.name'] === 'redis');
    expect(redis.length).toBeGreaterThan(0);
    for (const span of redis) {
      // The command alone: rate-limit keys carry user ids and client addresses.
      expect(span.attributes['db.query.text']).toMatch(/^[a-z]+$/);
      expect(JSON.stringify(span)).not.toContain(subject);
    }
    expect(sqlSpans(listed.below).map((span) => span.name)).toContain('SELECT plants');
  });

  it("writes the trace and server span ids in the request's log line", async () => {
    const listed = await tracedCall('GET', '/plants');
    await waitFor(() => service.logLines().some((line) => line.requestId === listed.requestId), {
      what: 'the log line',
    });
    const line = service.logLines().find((entry) => entry.requestId === listed.requestId)!;
    expect(line).toMatchObject({
      msg: 'GET /plants 200',
      trace_id: listed.caller.traceId,
      span_id: listed.server.spanId,
    });
  });

  it('starts a trace of its own for a caller without traceparent', async () => {
    const requestId = randomUUID();
    const res = await fetch(`${service.url}/plants`, {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId },
    });
    expect(res.status).toBe(200);
    await waitFor(() => service.logLines().some((line) => line.requestId === requestId), { what: 'the log line' });
    const line = service.logLines().find((entry) => entry.requestId === requestId)!;
    await waitFor(() => receiver.spans.some((span) => span.spanId === line.span_id), { what: 'the server span' });
    const server = receiver.spans.find((span) => span.spanId === line.span_id)!;
    expect(server).toMatchObject({ traceId: line.trace_id, name: 'GET /plants', kind: SPAN_KIND_SERVER });
    expect(server.parentSpanId ?? '').toBe('');
  });

  it('exports no token that a caller put in the URL, nor the Authorization header', async () => {
    const leaked = await tracedCall('GET', `/nowhere/${token}?access_token=${token}`);
    expect(leaked.status).toBe(404);
    expect(leaked.server.name).toBe('GET');
    expect(leaked.server.attributes['url.path']).toBe('/nowhere/[redacted]');
    expect(leaked.server.attributes['url.query']).toBe('access_token=[redacted]');
    expect(receiver.bodies.join('\n')).not.toContain(token.slice(4));
    expect(receiver.bodies.join('\n')).not.toMatch(/authorization|Bearer/i);
  });

  it('does not trace the health probes', async () => {
    const before = receiver.spans.length;
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
    // A traced request after the probe: once its span is in, the probe's would have been too.
    await tracedCall('GET', '/plants');
    expect(receiver.spans.slice(before).filter((span) => /health/.test(String(span.attributes['url.path'])))).toEqual(
      [],
    );
  });
});

describe('trace export at shutdown', () => {
  it('hands the spans still waiting to the collector on SIGTERM, then exits 0', async () => {
    const receiver = new OtlpReceiver();
    await receiver.start();
    try {
      const env = (await prepareDatabase('sqlite')).env;
      const token = await createTokenWithCli(env, 'tracer-shutdown');
      // Batches every minute: only the shutdown's flush can deliver the span within the test.
      const service = await startServiceProcess({ ...env, ...tracingEnv(receiver, 60_000), SHUTDOWN_DELAY_MS: '0' });
      const caller = callerContext();
      const res = await fetch(`${service.url}/plants`, {
        headers: { authorization: `Bearer ${token}`, traceparent: caller.traceparent },
      });
      expect(res.status).toBe(200);
      expect(await service.stop('SIGTERM')).toBe(0);
      expect(serverSpanOf(receiver.inTrace(caller.traceId))?.name).toBe('GET /plants');
    } finally {
      await receiver.stop();
    }
  }, 120_000);
});

describe('sampled by ratio, none of the new traces kept (parentbased_traceidratio 0, sqlite)', () => {
  const receiver = new OtlpReceiver();
  let service: ServiceProcess;
  let token: string;

  beforeAll(async () => {
    await receiver.start();
    const env = (await prepareDatabase('sqlite')).env;
    token = await createTokenWithCli(env, 'tracer-ratio');
    service = await startServiceProcess({
      ...env,
      ...tracingEnv(receiver),
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await receiver.stop();
  });

  it("traces a caller's sampled request, and no request that continues no trace", async () => {
    const requestId = randomUUID();
    const untraced = await fetch(`${service.url}/plants`, {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId },
    });
    expect(untraced.status).toBe(200);
    const caller = callerContext();
    const traced = await fetch(`${service.url}/plants`, {
      headers: { authorization: `Bearer ${token}`, traceparent: caller.traceparent },
    });
    expect(traced.status).toBe(200);
    await waitFor(() => serverSpanOf(receiver.inTrace(caller.traceId)) !== undefined, { what: "the caller's span" });
    expect(serverSpanOf(receiver.inTrace(caller.traceId))).toMatchObject({
      name: 'GET /plants',
      parentSpanId: caller.spanId,
    });
    // The traced request's span is in: the untraced one's would have been exported with it or before.
    expect(receiver.spans.filter((span) => span.traceId !== caller.traceId)).toEqual([]);
    await waitFor(() => service.logLines().some((entry) => entry.requestId === requestId), { what: 'the log line' });
    const line = service.logLines().find((entry) => entry.requestId === requestId);
    expect(line).toMatchObject({ msg: 'GET /plants 200' });
    expect(line).not.toHaveProperty('trace_id');
  });
});

describe('tracing unset', () => {
  /** What a process that loads the app as main.ts does (tracing entry first) has registered. */
  function registered(env: Record<string, string>): { sdkLoaded: boolean; provider: string; on: boolean } {
    const script = `
      require(${JSON.stringify(builtModule('tracing/start'))});
      require(${JSON.stringify(builtModule('app.module'))});
      const { trace } = require('@opentelemetry/api');
      const { tracingOn } = require(${JSON.stringify(builtModule('tracing/tracing'))});
      process.stdout.write(JSON.stringify({
        sdkLoaded: Object.keys(require.cache).some((path) => /[\\\\/]@opentelemetry[\\\\/](sdk-|instrumentation)/.test(path)),
        provider: trace.getTracerProvider().getDelegate().constructor.name,
        on: tracingOn(),
      }));`;
    const child = spawnSync(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (child.status !== 0) throw new Error(`the probe failed: ${child.stderr}`);
    return JSON.parse(child.stdout) as { sdkLoaded: boolean; provider: string; on: boolean };
  }

  it('loads no OpenTelemetry SDK and registers no tracer provider without an OTLP endpoint', () => {
    expect(registered({ OTEL_SERVICE_NAME: 'plant-store' })).toEqual({
      sdkLoaded: false,
      provider: 'NoopTracerProvider',
      on: false,
    });
  });

  it("registers the SDK's tracer provider once an endpoint is set (the same probe, so it can tell)", () => {
    const state = registered({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(state).toMatchObject({ sdkLoaded: true, on: true });
    expect(state.provider).not.toBe('NoopTracerProvider');
  });

  it('stays off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, endpoint or not', () => {
    const offs: Record<string, string>[] = [{ OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }];
    for (const off of offs) {
      expect(registered({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...off })).toMatchObject({
        sdkLoaded: false,
        on: false,
      });
    }
  });
});

describe('what a server span takes from headers any client sets (sqlite)', () => {
  const receiver = new OtlpReceiver();
  /** TRUST_PROXY unset, and an identity provider that cannot be reached: a JWT is answered 503. */
  let direct: ServiceProcess;
  /** TRUST_PROXY=loopback: the test is the proxy. */
  let proxied: ServiceProcess;
  let token: string;
  /** The shape of a JWT, refused by nothing before the provider is asked for its keys. */
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwYXN0ZWQifQ.c2lnbmF0dXJlLW9mLXRoZS1qd3Q';

  beforeAll(async () => {
    await receiver.start();
    const env = (await prepareDatabase('sqlite')).env;
    token = await createTokenWithCli(env, 'forwarded');
    const oidc = { OIDC_ISSUER: `http://127.0.0.1:${await freePort()}`, OIDC_AUDIENCE: 'plant-store' };
    [direct, proxied] = await Promise.all([
      startServiceProcess({ ...env, ...tracingEnv(receiver), ...oidc }),
      startServiceProcess({ ...env, ...tracingEnv(receiver), TRUST_PROXY: 'loopback' }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([direct?.stop(), proxied?.stop()]);
    await receiver.stop();
  });

  /** Sends a request and waits for its log line and its server span. */
  async function call(
    service: ServiceProcess,
    path: string,
    headers: Record<string, string>,
    method = 'GET',
  ): Promise<{ status: number; line: Record<string, unknown>; span: ReceivedSpan }> {
    const requestId = randomUUID();
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId, ...headers },
    });
    await res.arrayBuffer();
    const lineOf = () => service.logLines().find((entry) => entry.requestId === requestId && 'path' in entry);
    await waitFor(() => lineOf() !== undefined, { what: `the log line of ${requestId}` });
    const line = lineOf()!;
    const spanOf = () => receiver.spans.find((span) => span.spanId === line.span_id);
    await waitFor(() => spanOf() !== undefined, { what: `the server span of ${requestId}` });
    return { status: res.status, line, span: spanOf()! };
  }

  it.each([
    ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.77' }, ['203.0.113.77']],
    ['Forwarded', { forwarded: 'for=anything;host=forged.example' }, ['anything', 'forged.example']],
    ['X-Forwarded-Host', { 'x-forwarded-host': 'forged.example' }, ['forged.example']],
  ])('without TRUST_PROXY, a forged %s reaches neither the span nor the log line', async (_name, headers, forged) => {
    const { status, line, span } = await call(direct, '/plants', headers);
    expect(status).toBe(200);
    expect(line.client).toBe('127.0.0.1');
    expect(span.attributes).toMatchObject({ 'client.address': '127.0.0.1', 'server.address': '127.0.0.1' });
    for (const value of forged) expect(JSON.stringify([span, line])).not.toContain(value);
  });

  it('behind a trusted proxy, the span and the log line have the client X-Forwarded-For names, as Express reads it', async () => {
    const forwarded = await call(proxied, '/plants', { 'x-forwarded-for': '198.51.100.23, 203.0.113.77' });
    expect(forwarded.line.client).toBe('203.0.113.77');
    expect(forwarded.span.attributes['client.address']).toBe('203.0.113.77');
    // Express reads X-Forwarded-For only: a Forwarded header says nothing, even from a trusted proxy.
    const standard = await call(proxied, '/plants', { forwarded: 'for=198.51.100.24' });
    expect(standard.line.client).toBe('127.0.0.1');
    expect(standard.span.attributes['client.address']).toBe('127.0.0.1');
  });

  it('writes a token in the URL or a header of a request answered 503 nowhere: log, span, or any export', async () => {
    const { status, line, span } = await call(
      direct,
      `/plants/${token}?access_token=${token}`,
      { authorization: `Bearer ${jwt}`, 'user-agent': `client/1 (${token})` },
      'DELETE',
    );
    // The provider's keys cannot be had: the JWT cannot be checked.
    expect(status).toBe(503);
    expect(line).toMatchObject({ path: '/plants/[redacted]', status: 503 });
    expect(span.attributes).toMatchObject({
      'url.path': '/plants/[redacted]',
      'url.query': 'access_token=[redacted]',
      'user_agent.original': 'client/1 ([redacted])',
    });
    // The exception filter's line of the 503 is written before the request line.
    expect(
      direct.logLines().find((entry) => entry.requestId === line.requestId && entry.level === 'warn'),
    ).toMatchObject({ msg: expect.stringMatching(/^DELETE \/plants\/\[redacted\] -> 503: /) });
    for (const secret of [token.slice('pst_'.length), jwt.split('.')[1]]) {
      expect(direct.output()).not.toContain(secret);
      expect(receiver.bodies.join('\n')).not.toContain(secret);
    }
  });
});
