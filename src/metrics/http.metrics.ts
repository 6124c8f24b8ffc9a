import { Injectable } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { MetricsService } from './metrics.service';

/** Request durations in seconds: fine below 100 ms, where this service's answers are expected. */
const DURATION_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The API's requests, observed once answered: by HttpMetricsMiddleware, and by the HTTP server for
 * those Node's HTTP layer refuses before any middleware sees them.
 */
@Injectable()
export class HttpMetrics {
  readonly requestDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(metrics: MetricsService) {
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers: [metrics.registry],
    });
  }

  /**
   * Counts a request Node's HTTP layer refused before any middleware saw it (malformed, headers too
   * large, unknown Expect), as an unmatched request answered at once.
   */
  countRefusedByHttpLayer(status: number, method: string | undefined): void {
    this.requestDuration.observe({ method: method ?? 'unknown', route: 'unmatched', status: String(status) }, 0);
  }
}
