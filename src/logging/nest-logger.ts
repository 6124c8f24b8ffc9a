import { LoggerService } from '@nestjs/common';
import { Logger, Params, PinoLogger } from 'nestjs-pino';
import { ConfigValidationError } from '../config/configuration';
import { LogOutput } from './log-output';

/**
 * Nest's own lines (start-up, modules, routes, shutdown) and every `new Logger(context)` as lines of
 * `output`, through nestjs-pino (`context` and `msg` fields). Given to NestFactory.create rather than
 * taken from the app once it is built: every line is then written, and stamped, when it is logged,
 * not held until the app is ready.
 *
 * A wrong setting, which stops the start, is the operator's to fix: each wrong variable is one line
 * naming it, without the error's stack, which would say nothing more and bury the lines.
 */
export function nestLogger(output: LogOutput): LoggerService {
  const params: Params = { pinoHttp: { logger: output.logger } };
  const logger = new Logger(new PinoLogger(params), params);
  const error = logger.error.bind(logger);
  logger.error = (message: unknown, ...optionalParams: unknown[]) => {
    if (!(message instanceof ConfigValidationError)) return error(message, ...optionalParams);
    // The last parameter is the context; Nest puts an empty stack before it.
    for (const problem of message.problems) error(`Invalid configuration: ${problem}`, ...optionalParams.slice(-1));
  };
  return logger;
}
