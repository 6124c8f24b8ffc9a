import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { MetricsModule } from '../metrics/metrics.module';
import { HealthController } from './health.controller';
import { HealthMetrics } from './health.metrics';
import { HealthService } from './health.service';
import { GaleraHealthIndicator } from './galera.health';
import { SchemaHealthIndicator } from './schema.health';

@Module({
  // Failures are answered as 503 and counted in metrics; terminus's own error log would repeat each probe.
  imports: [TerminusModule.forRoot({ logger: false }), LifecycleModule, MetricsModule],
  controllers: [HealthController],
  providers: [HealthService, HealthMetrics, SchemaHealthIndicator, GaleraHealthIndicator],
})
export class HealthModule {}
