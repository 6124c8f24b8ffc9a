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
  it('starts nothing without an endpoint, and stopping is then a no-op', async () => {
    expect(startTracing({})).toBe(false);
    expect(tracingOn()).toBe(false);
    await expect(stopTracing()).resolves.toBeUndefined();
  });
});
