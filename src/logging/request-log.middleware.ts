import { Injectable, NestMiddleware } from '@nestjs/common';
import { SpanContext, isSpanContextValid, trace } from '@opentelemetry/api';
import { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Level } from 'pino';
import { Principal, TokenKind } from '../auth/principal';
import { clientAddress } from '../common/http/client-address';
import { loggedPath, redactTokens } from '../common/http/redact-tokens';
import { requestElapsedMs, startRequestClock } from '../common/http/request-clock';
import { routeTemplate } from '../common/http/route-template';
import { tracingOn } from '../tracing/tracing';
import { LogOutput } from './log-output';
import { REQUEST_ID_MAX_LENGTH } from './logging.limits';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * A client's request id is kept if it is 1 to REQUEST_ID_MAX_LENGTH visible ASCII characters with nothing shaped like
 * a token in it (it is written in every line of the request, where the one redaction would leave
 * lines no id tells apart); otherwise one is made.
 */
const ACCEPTED_REQUEST_ID = new RegExp(`^[\\x21-\\x7e]{1,${REQUEST_ID_MAX_LENGTH}}$`);

/** Logged for a request whose client closed the connection before the answer was complete, as nginx does. */
export const CLIENT_CLOSED_REQUEST = 499;

/** Requests from probes are logged at debug, so the default level is not flooded by them. */
const PROBE_PATHS = /^\/health\//;

type LoggedRequest = IncomingMessage &
  Partial<Pick<Request, 'route'>> & { id?: string; user?: Principal; spanContext?: SpanContext };

export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const accepted =
    typeof incoming === 'string' && ACCEPTED_REQUEST_ID.test(incoming) && redactTokens(incoming) === incoming;
  const id = accepted ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** The fields of a request's line, in the order they are written. */
export interface RequestLogFields {
  requestId: string | undefined;
  method: string | undefined;
  route: string | null;
  path: string;
  status: number;
  durationMs: number;
  subject: string | null;
  /** Which kind of token authenticated the request (`pst`, `jwt`), never the token. */
  tokenKind: TokenKind | null;
  /** Unknown once the client has gone, and then left out, as pino leaves out undefined fields. */
  client: string | undefined;
  /**
   * The request's trace and server span when tracing is on (named as OpenTelemetry's log
   * correlation names them, so a log pipeline links the line to its trace); left out otherwise.
   */
  trace_id?: string;
  span_id?: string;
}

/**
 * The fields of the one line written per request. Built field by field, never from the raw
 * request, so headers (Authorization), query strings and bodies cannot reach the log.
 */
export function requestLogFields(req: IncomingMessage, res: ServerResponse, durationMs: number): RequestLogFields {
  const request = req as LoggedRequest;
  const url = (request as Partial<Pick<Request, 'originalUrl'>>).originalUrl ?? request.url ?? '';
  return {
    requestId: request.id,
    method: request.method,
    route: routeTemplate(request as Request) ?? null,
    path: loggedPath(url),
    status: res.writableFinished ? res.statusCode : CLIENT_CLOSED_REQUEST,
    durationMs,
    subject: request.user?.subject ?? null,
    tokenKind: request.user?.kind ?? null,
    client: clientAddress(request),
  };
}

/** Server errors at error, a response the client did not wait for at warn, probes at debug. */
export function requestLogLevel(req: IncomingMessage, res: ServerResponse): Level {
  if (res.statusCode >= 500) return 'error';
  if (!res.writableFinished) return 'warn';
  return PROBE_PATHS.test(req.url ?? '') ? 'debug' : 'info';
}

/** Printable ASCII but `"` and `\`: what JSON writes as it is. Nearly every field of a line is only that. */
const PLAIN = /^[ !#-[\]-~]*$/;

const json = (value: string | null | undefined): string =>
  value == null ? 'null' : PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);

/**
 * The fields of a request's line as JSON text, `"requestId":…,"msg":…`, as pino writes them for
 * `logger[level](fields, requestLogMessage(fields))` (the spec compares the whole lines byte for
 * byte), built directly: they are fixed, and pino's general serializer, which walks any object,
 * costs more than the rest of the line. The method (an HTTP token: no quote, no backslash, no
 * control character, as Node's parser enforces) and the route (one of the app's own) need no
 * escaping, nor does the message made of them and the status.
 */
export function requestLineFields(fields: RequestLogFields): string {
  const route = fields.route === null ? 'null' : `"${fields.route}"`;
  const client = fields.client === undefined ? '' : `,"client":${json(fields.client)}`;
  // Lowercase hex (W3C Trace Context), written as it is.
  const traced = fields.trace_id === undefined ? '' : `,"trace_id":"${fields.trace_id}","span_id":"${fields.span_id}"`;
  return (
    `"requestId":${json(fields.requestId)},"method":"${fields.method}","route":${route},` +
    `"path":${json(fields.path)},"status":${fields.status},"durationMs":${fields.durationMs},` +
    `"subject":${json(fields.subject)},"tokenKind":${fields.tokenKind === null ? 'null' : `"${fields.tokenKind}"`}` +
    `${client}${traced},"msg":"${requestLogMessage(fields)}"`
  );
}

/** `GET /plants 200`, `GET - 404` (no route), `POST /plants aborted` (the client left first). */
export function requestLogMessage(fields: RequestLogFields): string {
  const outcome = fields.status === CLIENT_CLOSED_REQUEST ? 'aborted' : fields.status;
  return `${fields.method} ${fields.route ?? '-'} ${outcome}`;
}

/**
 * Writes the request's line once its response is over, unless the logger's level drops it; with the
 * ids of `span`, its server span, when tracing is on.
 */
export function logRequest(output: LogOutput, req: IncomingMessage, res: ServerResponse, span?: SpanContext): void {
  const logger = output.logger;
  const level = requestLogLevel(req, res);
  // Nothing is built for a line the level drops: at warn, the level operators run under load,
  // that is every successful request.
  if (!logger.isLevelEnabled(level)) return;
  const fields = requestLogFields(req, res, Math.round(requestElapsedMs(res) * 1000) / 1000);
  if (span !== undefined) {
    fields.trace_id = span.traceId;
    fields.span_id = span.spanId;
  }
  if (output.json) output.writeLine(level, fields, requestLineFields);
  else logger[level](fields, requestLogMessage(fields));
}

function activeSpanContext(): SpanContext | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? span : undefined;
}

/**
 * Gives every request its id (echoed in X-Request-Id) and writes one JSON line per request when it
 * is over, to the service's log output.
 *
 * This is the work pino-http does, without what made pino-http's line cost a fifth of a list
 * request's CPU where this one costs a few percent, on Node.js 26 and 24 alike (`npm run
 * bench:log-line`, bench/RESULTS.md): two pino child loggers per request, pino's serializer walking
 * the line's object, and the line made when its request ends. Lines that belong to a request and are
 * written elsewhere (the exception filter's) carry `requestId` themselves.
 */
@Injectable()
export class RequestLogMiddleware implements NestMiddleware {
  /** One listener for every response, reading the response from `this`: no closure per request. */
  private readonly onClose: (this: ServerResponse) => void;
  /** Read once: with tracing off a request does nothing for it, not even a check per line. */
  private readonly traced = tracingOn();

  constructor(output: LogOutput) {
    // The line's fields are fixed and checked (requestLogFields), so the logger's key-based
    // redaction, which would pass every field of every line through a redactor, has nothing to do.
    this.onClose = this.traced
      ? function onTracedClose(this: ServerResponse) {
          logRequest(output, this.req, this, (this.req as LoggedRequest).spanContext);
        }
      : function onClose(this: ServerResponse) {
          logRequest(output, this.req, this);
        };
  }

  use(req: Request, res: Response, next: NextFunction): void {
    (req as LoggedRequest).id = requestIdFor(req, res);
    startRequestClock(res);
    // The server span of a sampled request, made active before any middleware ran
    // (tracing/server-spans.ts); an unsampled request has none, and its line no trace ids.
    if (this.traced) (req as LoggedRequest).spanContext = activeSpanContext();
    // The client's address is read from the socket, which has none once the client has gone; read
    // now, the socket keeps it for the line of a request that ends aborted.
    void req.socket.remoteAddress;
    // 'close' follows 'finish' for every answered response, and comes alone when the client left.
    res.on('close', this.onClose);
    next();
  }
}
