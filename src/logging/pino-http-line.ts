import { SpanContext, isSpanContextValid, trace } from '@opentelemetry/api';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Request } from 'express';
import { Options } from 'pino-http';
import { Principal } from '../auth/principal';
import { clientAddress } from '../common/http/client-address';
import { loggedPath } from '../common/http/redact-tokens';
import { routeTemplate } from '../common/http/route-template';
import { startRequestClock, requestElapsedMs } from '../common/http/request-clock';
import { tracingOn } from '../tracing/tracing';
import { LogOutput } from './log-output';
import {
  CLIENT_CLOSED_REQUEST,
  RequestLogFields,
  requestIdFor,
  requestLogLevel,
  requestLogMessage,
} from './request-log.middleware';

const FIELDS = Symbol('requestLogFields');
type Logged = ServerResponse & { [FIELDS]?: Partial<RequestLogFields> };
type Traced = IncomingMessage & { spanContext?: SpanContext };

function activeSpanContext(): SpanContext | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? span : undefined;
}

/**
 * The request line by pino-http alone (without nestjs-pino's request context), configured to write
 * the fields of the hand-written line in the same order: the request id as the request logger's
 * one binding (`quietReqLogger`), the other fields as the line's object, the message, the level.
 */
export function pinoHttpOptions(output: LogOutput): Options {
  const traced = tracingOn();
  const fields = (req: IncomingMessage, res: ServerResponse) => {
    const request = req as Traced & Partial<Pick<Request, 'route' | 'originalUrl'>> & { user?: Principal };
    // requestLogFields' fields but the request id, which the request logger's binding writes first.
    const line: Partial<RequestLogFields> = {
      method: request.method,
      route: routeTemplate(request as Request) ?? null,
      path: loggedPath(request.originalUrl ?? request.url ?? ''),
      status: res.writableFinished ? res.statusCode : CLIENT_CLOSED_REQUEST,
      durationMs: Math.round(requestElapsedMs(res) * 1000) / 1000,
      subject: request.user?.subject ?? null,
      tokenKind: request.user?.kind ?? null,
      client: clientAddress(request),
    };
    const span = request.spanContext;
    if (span !== undefined) {
      line.trace_id = span.traceId;
      line.span_id = span.spanId;
    }
    (res as Logged)[FIELDS] = line;
    return line;
  };
  const message = (res: ServerResponse) => requestLogMessage((res as Logged)[FIELDS] as RequestLogFields);
  return {
    logger: output.logger,
    wrapSerializers: false,
    serializers: { req: () => undefined, res: () => undefined },
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'requestId' },
    genReqId: (req, res) => {
      startRequestClock(res);
      if (traced) (req as Traced).spanContext = activeSpanContext();
      // Read now: the socket keeps it for the line of a request that ends aborted.
      void req.socket.remoteAddress;
      return requestIdFor(req, res);
    },
    customLogLevel: (req, res) => {
      const level = requestLogLevel(req, res);
      return output.logger.isLevelEnabled(level) ? level : 'silent';
    },
    customSuccessObject: (req, res) => fields(req, res),
    customErrorObject: (req, res) => fields(req, res),
    customSuccessMessage: (_req, res) => message(res),
    customErrorMessage: (_req, res) => message(res),
  };
}
