import {
  Attributes,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type { Request } from 'express';
import { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { TLSSocket } from 'node:tls';
import { clientAddress } from '../common/http/client-address';
import { redactTokens } from '../common/http/redact-tokens';
import { routeTemplate } from '../common/http/route-template';

/** Probes come every few seconds from every orchestrator: traced, they would drown the requests. */
const PROBE_PATHS = /^\/health\//;

/** The methods the HTTP conventions name; any other is recorded as `_OTHER`, with the original beside it. */
const KNOWN_METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  'QUERY',
]);

/**
 * The HTTP server's request handler, making a server span for every request the sampler keeps,
 * continuing a W3C `traceparent` (or whatever OTEL_PROPAGATORS reads), and handing the request on
 * with that span active, so the SQL and Redis spans of the request go under it.
 *
 * A request the sampler drops costs the propagator's look at its headers and the sampler's
 * decision, nothing more: no attribute is computed, no context is entered, no listener is added.
 * With no span active, nothing below records either (traced-statements.ts, the Redis
 * instrumentation's `requireParentSpan`), and the log line carries no trace ids, which would lead to
 * no trace. This is why the span is made here and not by OpenTelemetry's HTTP instrumentation, which
 * computes every attribute, enters a context and binds the request's and response's listeners to it
 * for every request, sampled or not: most of what tracing cost a request (bench/RESULTS.md).
 *
 * Probes are never traced, and nothing under them is.
 */
export function serverSpans(handler: RequestListener): RequestListener {
  const tracer = trace.getTracer('plant-store.http');
  return function tracedRequest(req: IncomingMessage, res: ServerResponse): void {
    if (PROBE_PATHS.test(req.url ?? '')) return handler(req, res);
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const method = knownMethod(req.method);
    // No attributes before the sampler's decision: the standard samplers decide on the trace id
    // and the parent alone, and a dropped request must not pay for them.
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) return handler(req, res);
    span.setAttributes(startAttributes(req));
    res.once('close', () => finishServerSpan(span, req, res));
    // The request's listeners are not bound to the context: what the service does after an event
    // of the request (its body read) it awaits, and a promise's continuation runs in the context
    // it was awaited in; a pipelined request waiting for its turn keeps its context too
    // (pipelined-requests.ts).
    context.with(trace.setSpan(parent, span), handler, undefined, req, res);
  };
}

/** Node's parser gives the method as sent, and takes only upper-case ones (`http.METHODS`). */
function knownMethod(method: string | undefined): string {
  return method === undefined ? 'GET' : KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/**
 * The URL as the span records it (`url.path`, `url.query`), with anything shaped like a token
 * replaced, as the log line writes the path.
 */
export function urlAttributes(url: string): Record<string, string> {
  const query = url.indexOf('?');
  if (query === -1) return { 'url.path': redactTokens(url) };
  const attributes: Record<string, string> = { 'url.path': redactTokens(url.slice(0, query)) };
  if (query < url.length - 1) attributes['url.query'] = redactTokens(url.slice(query + 1));
  return attributes;
}

/**
 * `host` and `port` of a Host header (`example.com:8080`, `[::1]:3000`), as Express's `hostname`
 * splits it.
 */
function hostAndPort(host: string): { host: string; port?: number } {
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
  const colon = host.indexOf(':', end);
  const name = colon === -1 ? host : host.slice(0, colon);
  const port = colon === -1 ? '' : host.slice(colon + 1);
  return { host: end > 0 ? name.slice(1, end - 1) : name, port: /^\d{1,5}$/.test(port) ? Number(port) : undefined };
}

/**
 * What a sampled request's server span starts with: the HTTP conventions' request attributes, none
 * of them taken from a header any client can send to say something else:
 *
 * - `client.address`: the socket's address until Express has the request and TRUST_PROXY decides
 *   (`finishServerSpan`); never `Forwarded` or X-Forwarded-For as they come;
 * - `server.address`, `server.port`: the Host header's, not a `Forwarded` or X-Forwarded-Host;
 * - the URL and the User-Agent with anything shaped like a token replaced. No header is recorded
 *   beyond these, so never `Authorization`.
 */
export function startAttributes(request: IncomingMessage): Attributes {
  const method = knownMethod(request.method);
  const attributes: Attributes = {
    'http.request.method': method,
    'url.scheme': (request.socket as Partial<TLSSocket> | undefined)?.encrypted ? 'https' : 'http',
    ...urlAttributes(request.url ?? ''),
  };
  if (method === '_OTHER' && request.method !== undefined) attributes['http.request.method_original'] = request.method;
  // Express has not taken the request yet: this is the socket's address.
  const peer = request.socket?.remoteAddress;
  if (peer !== undefined) {
    attributes['client.address'] = peer;
    attributes['network.peer.address'] = peer;
  }
  if (request.socket?.remotePort !== undefined) attributes['network.peer.port'] = request.socket.remotePort;
  if (request.httpVersion) attributes['network.protocol.version'] = request.httpVersion;
  if (request.headers.host !== undefined) {
    const { host, port } = hostAndPort(request.headers.host);
    attributes['server.address'] = redactTokens(host);
    if (port !== undefined) attributes['server.port'] = port;
  }
  const userAgent = request.headers['user-agent'];
  if (userAgent !== undefined) attributes['user_agent.original'] = redactTokens(userAgent);
  return attributes;
}

/**
 * Once the response is over: its status (a 5xx marks the span as failed, with `error.type` the
 * status, as the conventions say); the span named by the route it matched (`GET /plants/{id}`, the
 * template the OpenAPI document, the metrics and the log line use), never by the raw path, while a
 * request that matched no route keeps the method alone; and its `client.address` the one the log
 * line and the rate limit use (`clientAddress`, under TRUST_PROXY).
 */
export function finishServerSpan(span: Span, request: IncomingMessage, response: ServerResponse): void {
  const status = response.statusCode;
  span.setAttribute('http.response.status_code', status);
  if (!(status >= 100 && status < 500)) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  const client = clientAddress(request);
  if (client !== undefined) span.setAttribute('client.address', client);
  nameByRoute(span, request);
  span.end();
}

/** The span named by the route the request matched, which it records as `http.route`. */
export function nameByRoute(span: Span, request: IncomingMessage): void {
  const route = routeTemplate(request as Request);
  if (route === undefined) return;
  span.setAttribute('http.route', route);
  span.updateName(`${knownMethod(request.method)} ${route}`);
}
