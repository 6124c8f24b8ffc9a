import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { dirname, join } from 'node:path';
import { HandedIdGenerator, RootSampling, standardSampler } from './root-sampling';

/** The SDK's own reading of OTEL_TRACES_SAMPLER*, which the SDK uses when it is given no sampler. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createSamplerFromEnv: sdkSamplerFromEnv } = require(
  join(dirname(require.resolve('@opentelemetry/sdk-node')), 'create-from-env.cjs'),
) as { createSamplerFromEnv(): { toString(): string } | undefined };

describe(standardSampler.name, () => {
  const NAMES = [
    'always_on',
    'always_off',
    'traceidratio',
    'parentbased_always_on',
    'parentbased_always_off',
    'parentbased_traceidratio',
  ];
  const saved = { sampler: process.env.OTEL_TRACES_SAMPLER, arg: process.env.OTEL_TRACES_SAMPLER_ARG };
  afterAll(() => {
    for (const [key, value] of [
      ['OTEL_TRACES_SAMPLER', saved.sampler],
      ['OTEL_TRACES_SAMPLER_ARG', saved.arg],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it.each(NAMES.flatMap((name) => ['0', '0.1', ' 1 '].map((arg) => [name, arg])))(
    'builds %s (ratio %j) as the SDK builds it from the environment',
    (name, arg) => {
      // The SDK reads process.env itself; this file's environment is its own.
      process.env.OTEL_TRACES_SAMPLER = name;
      process.env.OTEL_TRACES_SAMPLER_ARG = arg;
      const expected = sdkSamplerFromEnv()!.toString();
      expect(standardSampler({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: arg })?.toString()).toBe(expected);
    },
  );

  it("is the SDK's default, parent-based and always on, when no sampler is named", () => {
    expect(standardSampler({})?.toString()).toBe(
      standardSampler({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' })?.toString(),
    );
    expect(standardSampler({ OTEL_TRACES_SAMPLER: ' ' })?.toString()).toBe(standardSampler({})?.toString());
  });

  it.each([
    ['a sampler the SDK does not know', { OTEL_TRACES_SAMPLER: 'jaeger_remote' }],
    ['a ratio sampler without its ratio', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' }],
    ['a ratio that is not a number', { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'tenth' }],
    ['a ratio above 1', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }],
    ['a ratio below 0', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '-0.1' }],
  ])('leaves %s to the SDK', (_label, env) => {
    expect(standardSampler(env)).toBeUndefined();
  });
});

describe(RootSampling.name, () => {
  /** Asks `rootSampling` about `count` requests; for each kept one, the trace id its root span takes. */
  function keptTraceIds(rootSampling: RootSampling, ids: HandedIdGenerator, count: number): string[] {
    const kept: string[] = [];
    for (let i = 0; i < count; i++) if (rootSampling.keeps('GET')) kept.push(ids.generateTraceId());
    return kept;
  }

  it('keeps exactly the traces the ratio sampler keeps, each root span taking the trace id decided on', () => {
    const ids = new HandedIdGenerator();
    const sampler = new TraceIdRatioBasedSampler(0.5);
    const asked: string[] = [];
    const rootSampling = new RootSampling(
      {
        shouldSample: (...args: Parameters<TraceIdRatioBasedSampler['shouldSample']>) => {
          asked.push(args[1]);
          expect(args).toEqual([ROOT_CONTEXT, args[1], 'GET', SpanKind.SERVER, {}, []]);
          return sampler.shouldSample(...args);
        },
      },
      ids,
    );
    const kept = keptTraceIds(rootSampling, ids, 400);
    const keptBySdk = asked.filter(
      (traceId) => sampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED,
    );
    expect(kept).toEqual(keptBySdk);
    // A ratio of 0.5 over 400 draws: far from none and from all.
    expect(kept.length).toBeGreaterThan(100);
    expect(kept.length).toBeLessThan(300);
  });

  it('hands nothing on for a trace it drops: the next root span draws its own trace id', () => {
    const ids = new HandedIdGenerator();
    const rootSampling = new RootSampling(new TraceIdRatioBasedSampler(0), ids);
    const handNext = jest.spyOn(ids, 'handNext');
    expect(rootSampling.keeps('GET')).toBe(false);
    const dropped = handNext.mock.results[0].value as string;
    expect(ids.generateTraceId()).not.toBe(dropped);
    expect(ids.generateTraceId()).toMatch(/^[0-9a-f]{32}$/);
    expect(ids.generateSpanId()).toMatch(/^[0-9a-f]{16}$/);
  });
});
