import { applyDecorators, CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Observable } from 'rxjs';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { readJsonBody } from './json-body';

/**
 * Reads the JSON body of the routes that take one, after the guards: a caller that is rate
 * limited, unauthenticated or lacks the scope is refused before a byte of its body is read or
 * decoded. Routes without this read no body; one sent to them is ignored (and its connection
 * closed if it was still arriving).
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const req = http.getRequest<IncomingMessage & { body?: unknown }>();
    req.body = await readJsonBody(req, http.getResponse<ServerResponse>());
    return next.handle();
  }
}

/** Marks a route as taking a JSON body (documented: 413 over 16 KiB, 415 not JSON). */
export function TakesJsonBody(): MethodDecorator {
  return applyDecorators(UseInterceptors(JsonBodyInterceptor), ApiConsumes('application/json'), ApiErrors(413, 415));
}
