import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { NodeSDK } from '@opentelemetry/sdk-node';
import Module from 'node:module';

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
  const plain = { require: Module.prototype.require, getBuiltinModule: process.getBuiltinModule };
  const sdk = new NodeSDK({
    serviceName: serviceNameFromEnv(env) ? undefined : DEFAULT_SERVICE_NAME,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  // The instrumentations find the modules they patch through a hook on require()
  // (require-in-the-middle), which resolves the file of every later require() for the life of the
  // process: mysql2 requires a module on every query. ioredis, the one module patched, is loaded
  // and patched here, and the hook then taken off.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('ioredis');
  Module.prototype.require = plain.require;
  process.getBuiltinModule = plain.getBuiltinModule;
  return sdk;
}
