import { Attributes, Link, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';

/**
 * The sampler OTEL_TRACES_SAMPLER names when it is one of the SDK's standard ones, built as the
 * SDK builds it from the environment (unset, the SDK's default: parent-based, always on). Anything
 * else (a name it does not know, a ratio that is not one) is left to the SDK, which reports it and
 * picks its default: undefined here.
 *
 * Every standard sampler decides a trace's root from its trace id alone, the same each time it is
 * asked, which is what lets `RootSampling` ask it before the SDK does.
 */
export function standardSampler(env: NodeJS.ProcessEnv): Sampler | undefined {
  const name = env.OTEL_TRACES_SAMPLER?.trim() ?? '';
  const ratio = (): Sampler | undefined => {
    const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim() ?? '';
    const value = arg === '' ? NaN : Number(arg);
    return value >= 0 && value <= 1 ? new TraceIdRatioBasedSampler(value) : undefined;
  };
  const parentBased = (root: Sampler | undefined) => root && new ParentBasedSampler({ root });
  switch (name) {
    case '':
    case 'parentbased_always_on':
      return parentBased(new AlwaysOnSampler());
    case 'parentbased_always_off':
      return parentBased(new AlwaysOffSampler());
    case 'parentbased_traceidratio':
      return parentBased(ratio());
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    default:
      return undefined;
  }
}

/**
 * The SDK's random ids, except that a trace id drawn for a sampler's decision ahead of the span
 * (`RootSampling.keeps`) is the one the next root span takes, so the span carries the trace id
 * its sampling was decided on.
 */
export class HandedIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private handed: string | undefined;

  generateTraceId(): string {
    const id = this.handed ?? this.random.generateTraceId();
    this.handed = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }

  /** A new trace id, which the next root span takes unless `withdraw` is called first. */
  handNext(): string {
    return (this.handed = this.random.generateTraceId());
  }

  withdraw(): void {
    this.handed = undefined;
  }
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];

/**
 * The configured sampler's decision for a request that continues no trace, asked before the SDK
 * makes a span: a request it drops then costs a trace id and the decision, and no span, span id
 * or context. The samplers are the SDK's own and the SDK's tracer decides again when it starts
 * the span of a request kept, on the same trace id (`HandedIdGenerator`), so which requests are
 * traced is exactly what the SDK alone would trace.
 */
export class RootSampling {
  constructor(
    private readonly sampler: Sampler,
    private readonly ids: HandedIdGenerator,
  ) {}

  /**
   * Whether the sampler keeps a new trace whose root is a server span named `name`. When it does,
   * the root span started next must be that span: it takes the trace id decided on.
   */
  keeps(name: string): boolean {
    const traceId = this.ids.handNext();
    const { decision } = this.sampler.shouldSample(
      ROOT_CONTEXT,
      traceId,
      name,
      SpanKind.SERVER,
      NO_ATTRIBUTES,
      NO_LINKS,
    );
    if (decision !== SamplingDecision.NOT_RECORD) return true;
    this.ids.withdraw();
    return false;
  }
}

/** What the SDK is given, when the sampler is a standard one, so the request handler can ask it first. */
export function rootSamplingFromEnv(
  env: NodeJS.ProcessEnv,
): { sampler: Sampler; idGenerator: HandedIdGenerator; rootSampling: RootSampling } | undefined {
  const sampler = standardSampler(env);
  if (sampler === undefined) return undefined;
  const idGenerator = new HandedIdGenerator();
  return { sampler, idGenerator, rootSampling: new RootSampling(sampler, idGenerator) };
}
