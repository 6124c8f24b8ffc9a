import type { RequestListener } from 'node:http';

/**
 * Whether this process exports traces, decided once from the standard OpenTelemetry variables
 * before the app's modules are loaded (start.ts, main.ts's first import). The SDK is loaded only
 * when tracing is on, so a service without an OTLP endpoint loads and runs no tracing code.
 */

/** What `startTracing` hands back: the SDK's own shutdown, which flushes the spans still waiting. */
export interface RunningTracing {
  shutdown(): Promise<void>;
}

/** At most this long is spent handing the last spans to the collector at shutdown. */
export const TRACE_FLUSH_MS = 1000;

let running: RunningTracing | undefined;

const isSet = (value: string | undefined): boolean => value !== undefined && value.trim() !== '';

/**
 * Tracing is on when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` for traces alone), unless `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. The endpoint is the switch because without one the SDK would send
 * to localhost:4318 by default, which no deployment should do by accident.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase());
  if (exporters.includes('none')) return false;
  return isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the SDK if the environment asks for it; must run before http, ioredis and the app are
 * loaded, so the instrumentations see them. Idempotent.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): boolean {
  if (running) return true;
  if (!tracingRequested(env)) return false;
  // Loaded here, not imported: with tracing off no OpenTelemetry SDK module is ever loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startSdk } = require('./sdk') as typeof import('./sdk');
  running = startSdk(env);
  return true;
}

/**
 * The HTTP server's request handler: while tracing is on, one that makes the server span of every
 * sampled request (server-spans.ts); with it off, `handler` itself.
 */
export function withServerSpans(handler: RequestListener): RequestListener {
  if (!running) return handler;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { serverSpans } = require('./server-spans') as typeof import('./server-spans');
  return serverSpans(handler);
}

/** Whether spans are being made in this process (read once by the hot paths, at construction). */
export function tracingOn(): boolean {
  return running !== undefined;
}

/**
 * Hands the spans still waiting to the collector, for at most `timeoutMs`: a collector that is
 * down must not hold the process at shutdown. Nothing is traced after it.
 */
export async function stopTracing(timeoutMs = TRACE_FLUSH_MS): Promise<void> {
  const tracing = running;
  if (!tracing) return;
  running = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    tracing.shutdown().catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs).unref())),
  ]);
  clearTimeout(timer);
}
