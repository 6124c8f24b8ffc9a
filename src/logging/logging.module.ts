import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Request, Response } from 'express';
import { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { LoggerModule, Params } from 'nestjs-pino';
import { levels, stdSerializers, stdTimeFunctions } from 'pino';
import { Principal } from '../auth/principal';
import { routeTemplate } from '../common/http/route-template';
import { AppConfig } from '../config/configuration';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** A client's request id is kept if it is 1 to 128 visible ASCII characters; otherwise one is made. */
const ACCEPTED_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
const MAX_LOGGED_PATH = 200;

/** Requests from probes are logged at debug, so the default level is not flooded by them. */
const PROBE_PATHS = /^\/health\//;

export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && ACCEPTED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/**
 * The one line written per request. Built field by field, never from the raw request, so headers
 * (Authorization), query strings and bodies cannot reach the log.
 */
export function requestLogFields(req: IncomingMessage, res: ServerResponse, durationMs: number): object {
  const request = req as Request & { id?: string; user?: Principal };
  const path = (request.path ?? request.url ?? '').split('?')[0];
  // The request id is already bound to every line of the request (quietReqLogger).
  return {
    method: request.method,
    route: routeTemplate(request) ?? null,
    path: path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path,
    status: (res as Response).statusCode,
    durationMs,
    subject: request.user?.subject ?? null,
    client: request.ip,
  };
}

function prettyAvailable(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

const omitted = (): undefined => undefined;

export function loggerParams(config: ConfigService<AppConfig, true>): Params {
  const { level, pretty } = config.get('log', { infer: true });
  const threshold = level === 'silent' ? Infinity : levels.values[level];
  return {
    pinoHttp: {
      level,
      genReqId: requestIdFor,
      // Lines carry the request id only; the request itself is described by requestLogFields.
      quietReqLogger: true,
      quietResLogger: true,
      customAttributeKeys: { reqId: 'requestId' },
      // pino-http binds the raw request to a child logger on every request, even with both quiet
      // options on and at levels that write nothing; serializing it (headers, redaction) was a large
      // share of a request's CPU. Nothing here logs req or res objects, so they serialize to nothing.
      wrapSerializers: false,
      serializers: { req: omitted, res: omitted, err: stdSerializers.err },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Defence in depth: nothing above logs headers, but no future field may carry a credential.
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.authorization', '*.token', '*.secret'], censor: '[redacted]' },
      customLogLevel: (req, res, error) => {
        const wanted = error || res.statusCode >= 500 ? 'error' : PROBE_PATHS.test(req.url ?? '') ? 'debug' : 'info';
        // pino-http builds a line's fields before the logger checks its level; 'silent' skips that
        // work for lines the configured level would drop anyway (every request line at warn).
        return levels.values[wanted] >= threshold ? wanted : 'silent';
      },
      customSuccessObject: (req, res, value: { responseTime: number }) => requestLogFields(req, res, value.responseTime),
      customErrorObject: (req, res, _error, value: { responseTime: number }) =>
        requestLogFields(req, res, value.responseTime),
      customSuccessMessage: (req, res) => `${req.method} ${routeTemplate(req as Request) ?? '-'} ${res.statusCode}`,
      customErrorMessage: (req, res) => `${req.method} ${routeTemplate(req as Request) ?? '-'} ${res.statusCode}`,
      transport:
        pretty && prettyAvailable()
          ? { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } }
          : undefined,
    },
  };
}

/** JSON lines on stdout (readable ones in development), one per request, through nestjs-pino. */
@Module({
  imports: [LoggerModule.forRootAsync({ inject: [ConfigService], useFactory: loggerParams })],
})
export class LoggingModule {}
