import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LoggerModule, Params } from 'nestjs-pino';
import pino, { LoggerOptions, stdSerializers, stdTimeFunctions } from 'pino';
import { AppConfig } from '../config/configuration';

function prettyAvailable(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

export function loggerOptions(config: ConfigService<AppConfig, true>): LoggerOptions {
  const { level, pretty } = config.get('log', { infer: true });
  return {
    level,
    serializers: { err: stdSerializers.err },
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Defence in depth: nothing logs headers, but no future field may carry a credential.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.authorization', '*.token', '*.secret'], censor: '[redacted]' },
    transport:
      pretty && prettyAvailable()
        ? { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } }
        : undefined,
  };
}

export function loggerParams(config: ConfigService<AppConfig, true>): Params {
  return {
    pinoHttp: { logger: pino(loggerOptions(config)) },
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
  imports: [LoggerModule.forRootAsync({ inject: [ConfigService], useFactory: loggerParams })],
})
export class LoggingModule {}
