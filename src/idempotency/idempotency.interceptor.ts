import {
  CallHandler,
  ExecutionContext,
  HttpException,
  HttpStatus,
  Injectable,
  NestInterceptor,
  createParamDecorator,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Observable, catchError, defer, from, mergeMap, of, switchMap, throwError } from 'rxjs';
import { Principal } from '../auth/principal';
import { routeTemplate } from '../common/http/route-template';
import { REPLAYED_HEADER, parseIdempotencyKey, requestFingerprint } from './idempotency-key';
import { HeldKey, IdempotencyService, StoreAnswerWithin, parseStoredBody } from './idempotency.service';

export const IDEMPOTENT_ROUTE = 'plant-store:idempotent-route';

export interface IdempotentOptions {
  /** The success answer carries a secret: it is stored sealed (WEBHOOK_SECRET_KEY). */
  sealSuccess?: boolean;
}

type KeyedRequest = Request & { user: Principal; idempotencyKey?: HeldKey };

/**
 * Wraps the routes marked @Idempotent(): without an `Idempotency-Key` the request passes straight
 * through; with one, the key is taken before the pipes and the handler run (so a 400 of validation
 * is a stored answer like any other), and the answer is stored or the key freed afterwards.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<KeyedRequest>();
    const header = req.headers['idempotency-key'];
    if (header === undefined) return next.handle();
    const res = http.getResponse<Response>();
    return defer(() => {
      const key = parseIdempotencyKey(header);
      const options = this.reflector.get<IdempotentOptions | undefined>(IDEMPOTENT_ROUTE, context.getHandler());
      const successStatus =
        this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ?? HttpStatus.CREATED;
      const fingerprint = requestFingerprint(req.method, routeTemplate(req) ?? req.path, req.body);
      return from(
        this.idempotency.begin({ owner: req.user.subject, key }, fingerprint, {
          successStatus,
          sealSuccess: options?.sealSuccess ?? false,
        }),
      );
    }).pipe(
      switchMap((begun) => {
        if (begun.kind === 'replay') {
          res.setHeader(REPLAYED_HEADER, 'true');
          if (begun.statusCode >= 400) {
            const stored = parseStoredBody(begun.body) as { message: string };
            return throwError(() => new HttpException(stored.message, begun.statusCode));
          }
          return of(parseStoredBody(begun.body));
        }
        const held = begun.held;
        req.idempotencyKey = held;
        return next.handle().pipe(
          mergeMap(async (body: unknown) => {
            await this.idempotency.succeeded(held, body);
            return body;
          }),
          catchError((error: unknown) =>
            from(this.idempotency.failed(held, error)).pipe(mergeMap(() => throwError(() => error))),
          ),
        );
      }),
    );
  }
}

/**
 * For the handler of an @Idempotent() route: the write that stores its answer within its own
 * transaction, when the request holds a key; undefined without one.
 */
export const IdempotentAnswer = createParamDecorator(
  (_data: unknown, context: ExecutionContext): StoreAnswerWithin | undefined =>
    context.switchToHttp().getRequest<KeyedRequest>().idempotencyKey?.storeWithin,
);
