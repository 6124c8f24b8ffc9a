import { LoggerService } from '@nestjs/common';
import { Logger, Params, PinoLogger } from 'nestjs-pino';
import { LogOutput } from './log-output';

/**
 * Nest's own lines (start-up, modules, routes, shutdown) and every `new Logger(context)` as lines of
 * `output`, through nestjs-pino (`context` and `msg` fields). Given to NestFactory.create rather than
 * taken from the app once it is built: every line is then written, and stamped, when it is logged,
 * not held until the app is ready.
 */
export function nestLogger(output: LogOutput): LoggerService {
  const params: Params = { pinoHttp: { logger: output.logger } };
  return new Logger(new PinoLogger(params), params);
}
