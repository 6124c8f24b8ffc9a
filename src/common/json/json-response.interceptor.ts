import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Response } from 'express';
import { stringify } from 'lossless-json';
import { Observable, map } from 'rxjs';

/**
 * Writes handler results as JSON with BigInt values as plain JSON numbers, so int64 ids leave the
 * service exactly as they were stored (JSON.stringify cannot write a BigInt at all).
 */
@Injectable()
export class JsonResponseInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((body: unknown) => {
        if (body === undefined || body === null || context.getType() !== 'http') return body;
        context
          .switchToHttp()
          .getResponse<Response>()
          .setHeader('Content-Type', 'application/json; charset=utf-8');
        return stringify(body);
      }),
    );
  }
}
