import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { HealthDto } from './dto/health.dto';
import { GaleraHealthIndicator } from './galera.health';
import { SchemaHealthIndicator } from './schema.health';

/** How long readiness waits for the database before calling it down. */
export const DATABASE_PING_TIMEOUT_MS = 1000;

const NOT_READY_REASONS: Record<string, string> = {
  lifecycle: 'the instance is shutting down',
  schema: 'the database schema is missing tables or columns the service uses',
  cluster: 'the database node is not synced with its cluster',
};

/**
 * Liveness says the process answers; readiness says it should get traffic (database reachable, not
 * stopping). Asked by the probes' routes, and by the readiness metric when Prometheus scrapes.
 */
@Injectable()
export class HealthService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly schema: SchemaHealthIndicator,
    private readonly shutdown: ShutdownState,
    private readonly galera: GaleraHealthIndicator,
  ) {}

  live(): Promise<HealthDto> {
    return this.run([]);
  }

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
