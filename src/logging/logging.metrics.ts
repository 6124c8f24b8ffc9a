import { Injectable } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service';
import { totalReadAtScrape } from '../metrics/totals.metrics';
import { LogOutput } from './log-output';

/** The log output's losses, read from it when Prometheus scrapes: a line logged costs nothing more. */
@Injectable()
export class LoggingMetrics {
  constructor(metrics: MetricsService, logOutput: LogOutput) {
    totalReadAtScrape(
      metrics.registry,
      'log_lines_dropped_total',
      'Log lines dropped because stdout was not taking them (a stalled or slow log reader)',
      () => logOutput.droppedLines,
    );
  }
}
