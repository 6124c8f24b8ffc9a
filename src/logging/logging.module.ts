import { Module } from '@nestjs/common';
import { LoggerModule, Params } from 'nestjs-pino';
import { LogOutput } from './log-output';
import { LogOutputModule } from './log-output.module';

export function loggerParams(output: LogOutput): Params {
  return {
    pinoHttp: { logger: output.logger },
    // Request lines come from RequestLogMiddleware; nestjs-pino's own per-request middleware (a
    // pino-http logger and a request context) is applied to no route.
    forRoutes: [],
  };
}

/**
 * JSON lines on stdout (readable ones in development) through pino: nestjs-pino is the Nest logger
 * of the whole app, and RequestLogMiddleware writes one line per request.
 */
@Module({
  imports: [
    LogOutputModule,
    LoggerModule.forRootAsync({ imports: [LogOutputModule], inject: [LogOutput], useFactory: loggerParams }),
  ],
  exports: [LogOutputModule],
})
export class LoggingModule {}
