import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { HealthService } from './health.service';

/** Readiness as a metric, checked when Prometheus scrapes: the probe's own checks, no request's. */
@Injectable()
export class HealthMetrics {
  constructor(metrics: MetricsService, health: HealthService) {
    const ready = () =>
      health.ready().then(
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
}
