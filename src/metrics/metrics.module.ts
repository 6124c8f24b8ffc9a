import { Module } from '@nestjs/common';
import { LogOutputModule } from '../logging/log-output.module';
import { HttpMetricsMiddleware } from './http-metrics.middleware';
import { MetricsService } from './metrics.service';

@Module({
  imports: [LogOutputModule],
  providers: [MetricsService, HttpMetricsMiddleware],
  exports: [MetricsService, HttpMetricsMiddleware],
})
export class MetricsModule {}
