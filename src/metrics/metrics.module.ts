import { Module } from '@nestjs/common';
import { HttpMetricsMiddleware } from './http-metrics.middleware';
import { HttpMetrics } from './http.metrics';
import { MetricsService } from './metrics.service';

@Module({
  // HttpMetricsMiddleware is mounted by AppModule, which gets it from here.
  providers: [MetricsService, HttpMetrics, HttpMetricsMiddleware],
  exports: [MetricsService, HttpMetricsMiddleware],
})
export class MetricsModule {}
