import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiSchema,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { Gauge } from 'prom-client';
import { Public } from '../auth/decorators/public.decorator';
import { ErrorDto } from '../common/openapi/error.dto';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { MetricsService } from '../metrics/metrics.service';
import { GaleraHealthIndicator } from './galera.health';
import { SchemaHealthIndicator } from './schema.health';

/** How long readiness waits for the database before calling it down. */
export const DATABASE_PING_TIMEOUT_MS = 1000;

/** Declared, not left out: an operation without `security` would inherit any top-level requirement. */
const NO_TOKEN: [] = [];

const NOT_READY_REASONS: Record<string, string> = {
  lifecycle: 'the instance is shutting down',
  schema: 'the database schema is missing tables or columns the service uses',
  cluster: 'the database node is not synced with its cluster',
};

@ApiSchema({ name: 'Health' })
class HealthDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';

  @ApiProperty({
    description: 'Each checked dependency and its state',
    example: { lifecycle: { status: 'up' }, database: { status: 'up' }, schema: { status: 'up' } },
    type: 'object',
    additionalProperties: { type: 'object', properties: { status: { type: 'string', enum: ['up'] } } },
  })
  info!: Record<string, { status: 'up' }>;
}

/**
 * Probes for load balancers and orchestrators: public, never rate limited, cheap. Liveness says
 * the process answers; readiness says it should get traffic (database reachable, not stopping).
 * Readiness is a metric too (`health_ready`), checked when Prometheus scrapes.
 */
@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly schema: SchemaHealthIndicator,
    private readonly shutdown: ShutdownState,
    private readonly galera: GaleraHealthIndicator,
    metrics: MetricsService,
  ) {
    const ready = () =>
      this.ready().then(
        () => 1,
        (error: unknown) => (error instanceof ServiceUnavailableException ? 0 : Number.NaN),
      );
    new Gauge({
      name: 'health_ready',
      help: 'Whether GET /health/ready would answer 200 (1) or 503 (0), checked at scrape time',
      registers: [metrics.registry],
      async collect() {
        this.set(await ready());
      },
    });
  }

  @Get('live')
  @ApiOperation({
    operationId: 'live',
    summary: 'Liveness',
    description: 'The process is up and answering.',
    security: NO_TOKEN,
  })
  @ApiOkResponse({ type: HealthDto, description: 'Alive' })
  live(): Promise<HealthDto> {
    return this.run([]);
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'Readiness',
    description:
      'The instance can serve: its database answers, the tables and columns it uses are there, and it is not shutting down.',
    security: NO_TOKEN,
  })
  @ApiOkResponse({ type: HealthDto, description: 'Ready for traffic' })
  @ApiServiceUnavailableResponse({ type: ErrorDto, description: 'Not ready: the message names what is down' })
  async ready(): Promise<HealthDto> {
    return this.run([
      () => {
        const indicator = this.indicators.check('lifecycle');
        return this.shutdown.isShuttingDown ? indicator.down({ message: 'shutting down' }) : indicator.up();
      },
      () => this.database.pingCheck('database', { timeout: DATABASE_PING_TIMEOUT_MS }),
      () => this.schema.check('schema', DATABASE_PING_TIMEOUT_MS),
      ...((await this.galera.applies(DATABASE_PING_TIMEOUT_MS)) ? [() => this.galera.check('cluster')] : []),
    ]);
  }

  private async run(checks: Parameters<HealthCheckService['check']>[0]): Promise<HealthDto> {
    try {
      const result = await this.health.check(checks);
      // Each check's state, as documented (HealthDto). Terminus 12 also reports how long a check
      // took (`responseTime`); the probe's answer stays what it was.
      const info = Object.fromEntries(
        Object.entries(result.info ?? {}).map(([key, state]) => [key, { status: state?.status }]),
      ) as HealthDto['info'];
      return { status: 'ok', info };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // Name what is down, never the driver's own message (it may quote hosts or SQL).
      const failed = Object.keys((error.getResponse() as HealthCheckResult).error ?? {});
      // A database that does not answer has no usable schema either; saying so once is enough.
      const reasons = failed
        .filter((key) => !(key === 'schema' && failed.includes('database')))
        .map((key) => NOT_READY_REASONS[key] ?? `${key} is down`);
      throw new ServiceUnavailableException(`Not ready: ${reasons.join('; ') || 'a check failed'}`);
    }
  }
}
