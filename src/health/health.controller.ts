import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiSchema, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Public } from '../auth/decorators/public.decorator';
import { ErrorDto } from '../common/openapi/error.dto';
import { galeraNodeReady, isGalera } from '../database/galera';
import { ShutdownState } from './shutdown-state';

/** How long readiness waits for the database before calling it down. */
export const DATABASE_PING_TIMEOUT_MS = 1000;

@ApiSchema({ name: 'Health' })
class HealthDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';

  @ApiProperty({
    description: 'Each checked dependency and its state',
    example: { database: { status: 'up' } },
    type: 'object',
    additionalProperties: { type: 'object', properties: { status: { type: 'string', enum: ['up'] } } },
  })
  info!: Record<string, { status: 'up' }>;
}

/**
 * Probes for load balancers and orchestrators: public, never rate limited, cheap. Liveness says
 * the process answers; readiness says it should get traffic (database reachable, not stopping).
 */
@ApiTags('health')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly shutdown: ShutdownState,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  @Get('live')
  @ApiOperation({ operationId: 'live', summary: 'Liveness', description: 'The process is up and answering.' })
  @ApiOkResponse({ type: HealthDto, description: 'Alive' })
  live(): Promise<HealthDto> {
    return this.run([]);
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'Readiness',
    description: 'The instance can serve: its database answers and it is not shutting down.',
  })
  @ApiOkResponse({ type: HealthDto, description: 'Ready for traffic' })
  @ApiServiceUnavailableResponse({ type: ErrorDto, description: 'Not ready: the message names what is down' })
  ready(): Promise<HealthDto> {
    return this.run([
      () => {
        const indicator = this.indicators.check('lifecycle');
        return this.shutdown.isShuttingDown ? indicator.down({ message: 'shutting down' }) : indicator.up();
      },
      () => this.database.pingCheck('database', { timeout: DATABASE_PING_TIMEOUT_MS }),
      ...(isGalera(this.dataSource) ? [() => this.galeraCheck()] : []),
    ]);
  }

  /** A Galera node that answers but is joining, a donor or cut off from the majority cannot serve. */
  private async galeraCheck() {
    const indicator = this.indicators.check('cluster');
    // Unreachable is the database check's to report; this one says only what the node says of itself.
    const ready = await galeraNodeReady(this.dataSource).catch(() => true);
    return ready ? indicator.up() : indicator.down({ message: 'node not synced' });
  }

  private async run(checks: Parameters<HealthCheckService['check']>[0]): Promise<HealthDto> {
    try {
      const result = await this.health.check(checks);
      return { status: 'ok', info: (result.info ?? {}) as HealthDto['info'] };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // Name what is down, never the driver's own message (it may quote hosts or SQL).
      const failed = Object.keys((error.getResponse() as HealthCheckResult).error ?? {});
      const reasons = failed.map((key) =>
        key === 'lifecycle'
          ? 'the instance is shutting down'
          : key === 'cluster'
            ? 'the database node is not synced with its cluster'
            : `${key} is down`,
      );
      throw new ServiceUnavailableException(`Not ready: ${reasons.join('; ') || 'a check failed'}`);
    }
  }
}
