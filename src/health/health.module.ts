import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { SchemaHealthIndicator } from './schema.health';
import { ShutdownState } from './shutdown-state';

@Module({
  // Failures are answered as 503 and counted in metrics; terminus's own error log would repeat each probe.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ShutdownState, SchemaHealthIndicator],
  exports: [ShutdownState],
})
export class HealthModule {}
