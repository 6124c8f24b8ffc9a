import { ConfigService } from '@nestjs/config';
import { LoggerOptions, stdSerializers, stdTimeFunctions } from 'pino';
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
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.authorization', '*.token', '*.secret'],
      censor: '[redacted]',
    },
    transport:
      pretty && prettyAvailable()
        ? {
            target: 'pino-pretty',
            options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
          }
        : undefined,
  };
}
