import { LoggerService } from '@nestjs/common';
import { Level } from 'pino';
import { ConfigValidationError } from '../config/configuration';
import { LogOutput } from './log-output';

/** Nest's level names, as pino names them. */
const LEVELS = {
  verbose: 'trace',
  debug: 'debug',
  log: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'fatal',
} as const satisfies Record<string, Level>;

/** A stack trace's text: what Nest's exception handlers pass after the message, `error(message, stack, context)`. */
const STACK = /\n\s*at /;

/**
 * Nest's own lines (start-up, modules, routes, shutdown) and every `new Logger(context)` as lines of
 * `output`: the context as `context`, the message as `msg`, an Error as `err` (pino's serializer),
 * an object's fields as the line's, more parameters than the context as the message's format
 * arguments. Given to NestFactory.create rather than taken from the app once it is built: every line
 * is then written, and stamped, when it is logged, not held until the app is ready.
 *
 * A wrong setting, which stops the start, is the operator's to fix: each wrong variable is one line
 * naming it, without the error's stack, which would say nothing more and bury the lines.
 */
export function nestLogger(output: LogOutput): LoggerService {
  const write = (level: Level, message: unknown, params: unknown[]): void => {
    const logger = output.logger;
    if (!logger.isLevelEnabled(level)) return;
    // Nest puts the context last.
    const fields: Record<string, unknown> = params.length === 0 ? {} : { context: params[params.length - 1] };
    const args = params.slice(0, -1);
    if (message instanceof Error) {
      fields.err = message;
      logger[level](fields, ...(args as []));
    } else if (typeof message === 'object') {
      logger[level](Object.assign(fields, message), ...(args as []));
    } else if (level === 'error' && typeof args[0] === 'string' && args.length === 1 && STACK.test(args[0])) {
      // `error(message, stack, context)`: the stack belongs to an error of that message.
      fields.err = Object.assign(new Error(String(message)), { stack: args[0] });
      logger.error(fields);
    } else {
      logger[level](fields, message as string, ...(args as []));
    }
  };
  const logger = {} as Required<Pick<LoggerService, keyof typeof LEVELS>>;
  for (const [method, level] of Object.entries(LEVELS) as [keyof typeof LEVELS, Level][]) {
    logger[method] = (message: unknown, ...params: unknown[]) => write(level, message, params);
  }
  logger.error = (message: unknown, ...params: unknown[]) => {
    if (!(message instanceof ConfigValidationError)) return write('error', message, params);
    // The last parameter is the context; Nest puts an empty stack before it.
    for (const problem of message.problems) write('error', `Invalid configuration: ${problem}`, params.slice(-1));
  };
  return logger;
}
