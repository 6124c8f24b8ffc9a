import { Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { LogOutput } from './log-output';
import { LoggingMetrics } from './logging.metrics';

describe(LoggingMetrics.name, () => {
  it('counts the log lines the log output dropped, read at each scrape', async () => {
    const registry = new Registry();
    const logOutput = { droppedLines: 0 };
    new LoggingMetrics({ registry } as MetricsService, logOutput as LogOutput);
    const scraped = async () => (await registry.getSingleMetric('log_lines_dropped_total')!.get()).values[0].value;
    await expect(scraped()).resolves.toBe(0);
    logOutput.droppedLines = 7;
    await expect(scraped()).resolves.toBe(7);
    logOutput.droppedLines = 9;
    await expect(scraped()).resolves.toBe(9);
  });
});
