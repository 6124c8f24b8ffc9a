import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { loggedPath, redactTokens } from '../http/redact-tokens';
import { InternalError } from './server.errors';

export interface ErrorBody {
  error: number;
  message: string;
}

const MAX_MESSAGE_LENGTH = 500;

/**
 * The one place where failures become HTTP answers. Every non-2xx response, from the router, the
 * body parser, the guard, a pipe, a service or the database, is `{ error, message }` as JSON.
 * Unexpected errors are logged with their stack and answered with a generic message: internals
 * (stack traces, SQL, driver messages) never reach the client.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request & { id?: string }>();
    const body = this.describe(exception, request);

    // Lines carry the request id, so they join the request's own log line, and write the path as it
    // does (no query, tokens redacted); the error's own text may quote the request too.
    if (body.error === 503) {
      // Expected while the database is down: one line each, no stack, so the log stays readable. The
      // reason is the driver's, which DatabaseUnavailable carries as its cause.
      const error = exception as Error | undefined;
      const reason = String((error?.cause as Error | undefined)?.message ?? error?.message ?? exception);
      this.logger.warn({ requestId: request.id, msg: redactTokens(`${this.requestLine(request)} -> 503: ${reason}`) });
    } else if (body.error >= 500) {
      const stack = exception instanceof Error ? exception.stack : String(exception);
      this.logger.error({
        requestId: request.id,
        msg: redactTokens(`${this.requestLine(request)} -> ${body.error}: ${stack}`),
      });
    }
    if (response.headersSent) {
      // Part of a response is already on the wire; all that is left is to end it.
      response.end();
      return;
    }
    response.status(body.error).json(body);
  }

  private requestLine(request: Request): string {
    return `${request.method} ${loggedPath(request.originalUrl ?? request.url ?? '')}`;
  }

  private describe(exception: unknown, request: Request): ErrorBody {
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      return { error: status, message: this.messageOf(exception, request) };
    }
    // Errors raised by Express and its middleware carry their status (http-errors convention);
    // their own messages may quote the request, so only the standard reason phrase is used.
    const status = (exception as { status?: unknown } | null)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return { error: status, message: STATUS_CODES[status] ?? 'Bad request' };
    }
    return bodyOf(new InternalError());
  }

  private messageOf(exception: HttpException, request: Request): string {
    // The router's own 404 quotes the raw URL; whatever a client put in it (query strings, a
    // pasted token, megabytes of path) is not sent back.
    if (exception instanceof NotFoundException && exception.message.startsWith('Cannot ')) {
      return `No route for ${request.method} at this path; the API is described at /docs`;
    }
    return httpExceptionMessage(exception);
  }
}

function bodyOf(exception: HttpException): ErrorBody {
  return { error: exception.getStatus(), message: exception.message };
}

/** The message an HttpException is answered with: what the filter writes, and what a stored answer repeats. */
export function httpExceptionMessage(exception: HttpException): string {
  const response = exception.getResponse();
  const message =
    typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
  const text = Array.isArray(message) ? message.join('; ') : String(message);
  return truncate(text || STATUS_CODES[exception.getStatus()] || 'Error');
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text;
}
