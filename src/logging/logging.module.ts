import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { MetricsModule } from '../metrics/metrics.module';
import { LogOutput } from './log-output';
import { LoggingMetrics } from './logging.metrics';
import { RequestLogMiddleware } from './request-log.middleware';

/**
 * The log's stdout writer, one per application and global: what reports on the log (metrics,
 * shutdown) and RequestLogMiddleware (provided here for AppModule's middleware) write through the same one as Nest's own lines.
 * Its metric (logging.metrics.ts) comes with it: only the service and the worker use it, and both serve metrics.
 */
@Global()
@Module({})
export class LoggingModule {
  /**
   * `output`: the one main.ts made before Nest started, so that Nest's first line was already in the
   * configured format; without it (tests, scripts), one made from the configuration.
   */
  static forRoot(output?: LogOutput): DynamicModule {
    return {
      module: LoggingModule,
      imports: [MetricsModule],
      providers: [
        output
          ? { provide: LogOutput, useValue: output }
          : {
              provide: LogOutput,
              inject: [ConfigService],
              useFactory: (config: ConfigService<AppConfig, true>) => new LogOutput(config.get('log', { infer: true })),
            },
        RequestLogMiddleware,
        LoggingMetrics,
      ],
      exports: [LogOutput, RequestLogMiddleware],
    };
  }
}
