import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { LogOutput } from './log-output';

/** The log output's losses, read from it when Prometheus scrapes: a line logged costs nothing more. */
@Injectable()
export class LoggingMetrics {
  constructor(metrics: MetricsService, logOutput: LogOutput) {
    let counted = 0;
    new Counter({
      name: 'log_lines_dropped_total',
      help: 'Log lines dropped because stdout was not taking them (a stalled or slow log reader)',
      registers: [metrics.registry],
      collect() {
        this.inc(logOutput.droppedLines - counted);
        counted = logOutput.droppedLines;
      },
    });
  }
}
