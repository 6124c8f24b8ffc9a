import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import { IncomingMessage, ServerResponse } from 'node:http';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { readJsonBody } from './json-body';
import { BodyNotJson, BodyTooLarge, MalformedJson } from './json-body.errors';

/**
 * Reads the JSON body of the routes that take one, once the global guards have let the request
 * through: a caller that is rate limited, unauthenticated or lacks the scope is refused before a
 * byte of its body is read or decoded. A body that cannot be read refuses the request (400, 413,
 * 415) as the guards before it refuse theirs. Routes without it read no body; one sent to them is
 * ignored (and its connection closed if it was still arriving).
 *
 * A route guard rather than an interceptor: it runs at the same point, but Nest wraps every
 * interceptor call in an AsyncResource and an Observable, which still costs a create request about
 * a tenth of its CPU on Node 26 (bench/RESULTS.md, "The current stack"), for nothing a guard does
 * not do.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<IncomingMessage & { body?: unknown }>();
    req.body = await readJsonBody(req, http.getResponse<ServerResponse>());
    return true;
  }
}

/**
 * Marks a route as taking a JSON body (documented: 413 over BODY_LIMIT_BYTES, 415 not JSON, 400
 * malformed), documented as `types` (every `application/*+json` type is read alike: a JSON Merge
 * Patch's `application/merge-patch+json` too).
 */
export function TakesJsonBody(...types: string[]): MethodDecorator {
  return applyDecorators(
    UseGuards(JsonBodyGuard),
    ApiConsumes(...(types.length > 0 ? types : ['application/json'])),
    ApiErrors(BodyTooLarge.doc, BodyNotJson.doc, MalformedJson.doc),
  );
}
