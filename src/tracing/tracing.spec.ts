import { context, propagation, trace } from '@opentelemetry/api';
import { startTracing, stopTracing, tracingOn, tracingRequested } from './tracing';

describe(tracingRequested.name, () => {
  const ENDPOINT = 'http://collector:4318';

  it.each([
    ['an OTLP endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT }, true],
    ['an OTLP endpoint for traces alone', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ENDPOINT}/v1/traces` }, true],
    [
      'an endpoint and the otlp exporter named',
      { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: 'otlp' },
      true,
    ],
    ['nothing', {}, false],
    ['a service name only', { OTEL_SERVICE_NAME: 'plant-store' }, false],
    ['an exporter named without an endpoint', { OTEL_TRACES_EXPORTER: 'otlp' }, false],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    ['the SDK disabled', { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }, false],
    ['the traces exporter none', { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('with %s: %s', (_label, env, expected) => {
    expect(tracingRequested(env as NodeJS.ProcessEnv)).toBe(expected);
  });
});

describe(startTracing.name, () => {
  afterEach(() => {
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it('starts nothing without an endpoint, and stopping is then a no-op', async () => {
    expect(startTracing({})).toBe(false);
    expect(tracingOn()).toBe(false);
    await expect(stopTracing()).resolves.toBeUndefined();
  });

  it('starts the SDK once with an endpoint, and stops it within the flush bound', async () => {
    // A collector that refuses connections: the shutdown must not wait for it beyond its bound.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' };
    expect(startTracing(env)).toBe(true);
    expect(startTracing(env)).toBe(true);
    expect(tracingOn()).toBe(true);
    trace.getTracer('test').startSpan('unexported').end();
    const started = Date.now();
    await stopTracing(500);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(tracingOn()).toBe(false);
  });
});
