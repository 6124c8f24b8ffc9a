import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { NodeSDK } from '@opentelemetry/sdk-node';

/** The service's name in traces when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names it. */
export const DEFAULT_SERVICE_NAME = 'plant-store';

function serviceNameFromEnv(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
}

/**
 * The OpenTelemetry Node SDK, configured from the standard OTEL_* variables (exporter, protocol,
 * endpoint, headers, sampler, batch sizes, resource), for traces only: the service's metrics stay
 * Prometheus and its logs stay JSON on stdout.
 *
 * - incoming HTTP: one server span per sampled request, made by the server's request handler
 *   (server-spans.ts) rather than by an HTTP instrumentation; outgoing HTTP (webhook deliveries to
 *   third parties) is not instrumented, so no trace context leaves for them;
 * - Redis (ioredis): a span per command within a sampled request, recording the command name, never
 *   its arguments (rate-limit keys carry user ids and client addresses);
 * - SQL: made at the TypeORM level (database/traced-statements.ts), the same on MySQL and SQLite, so
 *   the mysql2 instrumentation is not used.
 */
export function startSdk(env: NodeJS.ProcessEnv): NodeSDK {
  const sdk = new NodeSDK({
    serviceName: serviceNameFromEnv(env) ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  return sdk;
}
