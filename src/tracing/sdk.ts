import { Attributes, Span } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Request } from 'express';
import { IncomingMessage } from 'node:http';
import { clientAddress } from '../common/http/client-address';
import { redactTokens } from '../common/http/redact-tokens';
import { routeTemplate } from '../common/http/route-template';

/** The service's name in traces when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names it. */
export const DEFAULT_SERVICE_NAME = 'plant-store';

/** Probes come every few seconds from every orchestrator: traced, they would drown the requests. */
const PROBE_PATHS = /^\/health\//;

/**
 * The URL as the span records it (`url.path`, `url.query`), with anything shaped like a token
 * replaced, as the log line writes the path. Headers, bodies and the Authorization header are never
 * recorded: the instrumentation captures no header unless told to.
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
 * What a server span starts with beyond the instrumentation's own, replacing what it would take
 * from headers any client can send:
 *
 * - `client.address`: the socket's address. The instrumentation takes `Forwarded` or
 *   X-Forwarded-For as they come; the service believes only what TRUST_PROXY allows, which Express
 *   decides once it has the request (`finishServerSpan`).
 * - `server.address`, `server.port`: the Host header's, not a `Forwarded` or X-Forwarded-Host.
 * - the URL and the User-Agent with anything shaped like a token replaced.
 *
 * Undefined values remove the instrumentation's attribute of that name.
 */
export function startAttributes(request: IncomingMessage): Attributes {
  const host = request.headers.host === undefined ? undefined : hostAndPort(request.headers.host);
  const userAgent = request.headers['user-agent'];
  return {
    ...urlAttributes(request.url ?? ''),
    // Express has not taken the request yet: this is the socket's address.
    'client.address': clientAddress(request),
    'server.address': host && redactTokens(host.host),
    'server.port': host?.port,
    'user_agent.original': userAgent && redactTokens(userAgent),
  };
}

/**
 * Once the request is answered: the span is named by the route it matched (`GET /plants/{id}`, the
 * template the OpenAPI document, the metrics and the log line use), never by the raw path, and a
 * request that matched no route keeps the method alone, as the conventions say; its
 * `client.address` is the one the log line and the rate limit use (`clientAddress`, under
 * TRUST_PROXY).
 */
export function finishServerSpan(span: Span, request: IncomingMessage): void {
  const client = clientAddress(request);
  if (client !== undefined) span.setAttribute('client.address', client);
  nameByRoute(span, request);
}

/** The span named by the route the request matched, which it records as `http.route`. */
export function nameByRoute(span: Span, request: IncomingMessage): void {
  const route = routeTemplate(request as Request);
  if (route === undefined) return;
  span.setAttribute('http.route', route);
  span.updateName(`${request.method} ${route}`);
}

function serviceNameFromEnv(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
}

/**
 * The OpenTelemetry Node SDK, configured from the standard OTEL_* variables (exporter, protocol,
 * endpoint, headers, sampler, batch sizes, resource), for traces only: the service's metrics stay
 * Prometheus and its logs stay JSON on stdout.
 *
 * - incoming HTTP: one server span per request, continuing a W3C `traceparent`; outgoing HTTP
 *   (webhook deliveries to third parties) is not instrumented, so no trace context leaves for them;
 * - Redis (ioredis): a span per command within a request, recording the command name, never its
 *   arguments (rate-limit keys carry user ids and client addresses);
 * - SQL: made at the TypeORM level (database/traced-statements.ts), the same on MySQL and SQLite, so
 *   the mysql2 instrumentation is not used.
 */
export function startSdk(env: NodeJS.ProcessEnv): NodeSDK {
  const sdk = new NodeSDK({
    serviceName: serviceNameFromEnv(env) ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        disableOutgoingRequestInstrumentation: true,
        ignoreIncomingRequestHook: (request) => PROBE_PATHS.test(request.url ?? ''),
        startIncomingSpanHook: (request) => startAttributes(request as IncomingMessage),
        applyCustomAttributesOnSpan: (span, request) => finishServerSpan(span, request as IncomingMessage),
      }),
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  return sdk;
}
