import { HttpStatus, Inject, Req, RequestMethod, applyDecorators } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { ApiHeader } from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ErrorDoc } from '../common/openapi/error-doc';
import {
  IdempotencyKeyInFlight,
  IdempotencyKeyReused,
  IdempotentAnswerUnavailable,
  InvalidIdempotencyKey,
} from './idempotency.errors';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from './idempotency-key';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency.limits';
import { IdempotencyService } from './idempotency.service';
import { runIdempotent } from './idempotent-call';

/** The header of a replayed answer, documented on the success answer of every idempotent operation. */
export const REPLAYED_RESPONSE_HEADERS = {
  [REPLAYED_HEADER]: {
    description:
      '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, ' +
      'given again instead of processing the request twice (errors 4xx are replayed too)',
    schema: { type: 'string', enum: ['true'] },
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any handler's own parameters
type Handler = (...args: any[]) => Promise<unknown>;

export interface IdempotentOptions<H extends Handler = Handler> {
  /** The route's own reason for 409, which shares the status with a key still in progress. */
  conflict?: ErrorDoc;
  /** The success answer carries a secret: it is stored sealed (WEBHOOK_SECRET_KEY). */
  sealAnswer?: boolean;
  /**
   * Work that must come before the handler's transaction and is not done for a replay, such as a
   * look-up that waits on something other than the database: called with the handler's `this` and
   * arguments.
   */
  prepare?: (this: never, ...args: Parameters<H>) => Promise<unknown>;
}

/**
 * The mark the decorator leaves on the handler it wraps, by which a test of every route of the
 * application finds an unsafe one without it (test/idempotent-routes.e2e-spec.ts), whether or not
 * the OpenAPI document shows the route.
 */
export const IDEMPOTENT_KEY = 'plant-store:idempotent';

/** Whether `handler` (the method Nest calls for a route) is @Idempotent(). */
export const isIdempotent = (handler: object): boolean => Reflect.getMetadata(IDEMPOTENT_KEY, handler) === true;

/** Where the decorator has the injector put the service on the controller. */
const IDEMPOTENCY = Symbol('idempotency');

/**
 * Makes an unsafe operation (POST, PATCH, DELETE) safe to retry with `Idempotency-Key`, with this
 * one declaration: the header and its refusals in the OpenAPI document, and the handler run under
 * the key (runIdempotent): a repeat of the same request (method, path and body) by the same user
 * gets the first answer again, with `Idempotent-Replayed: true`; the handler's writes and the
 * stored answer commit together. Without the header the handler runs as it is, at the cost of a
 * header lookup. test/idempotent-routes.e2e-spec.ts holds every POST, PUT, PATCH and DELETE route
 * of the application to carrying it, and every operation that documents the key to replaying.
 *
 * No Nest interceptor: one on a route puts every call of it through an Observable pipeline, which
 * cost a create about a third more CPU (docs/performance.md). The handler is wrapped where it is
 * declared instead, as `@Transactional()` of @nestjs-cls/transactional wraps its methods: the
 * request comes to the wrapper as a parameter of its own after the handler's, and the service as a
 * property the injector sets on the controller.
 */
export function Idempotent<H extends Handler>(options: IdempotentOptions<H> = {}): MethodDecorator {
  const documented = applyDecorators(
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        `Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII ` +
        'characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, ' +
        'or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with ' +
        '`Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) ' +
        'by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, ' +
        'a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host ' +
        'did not resolve. Without the field nothing is kept. See docs/api.md.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
    }),
    ApiErrors(
      InvalidIdempotencyKey.doc,
      ...(options.conflict ? [options.conflict] : []),
      IdempotencyKeyInFlight.doc,
      IdempotencyKeyReused.doc,
      ...(options.sealAnswer ? [IdempotentAnswerUnavailable.doc] : []),
    ),
  );
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
    const handler = descriptor.value as H;
    const paramtypes = (Reflect.getMetadata('design:paramtypes', target, key) ?? []) as unknown[];
    const own = paramtypes.length;
    Req()(target, key, own);
    Reflect.defineMetadata('design:paramtypes', [...paramtypes, Object], target, key);
    Inject(IdempotencyService)(target, IDEMPOTENCY);

    let successStatus: number | undefined;
    const wrapped = function (this: { [IDEMPOTENCY]: IdempotencyService }, ...args: unknown[]) {
      const req = args[own] as Request;
      const params = args.slice(0, own) as Parameters<H>;
      successStatus ??= successStatusOf(wrapped);
      const route = { status: successStatus, sealAnswer: options.sealAnswer };
      const prepare = options.prepare;
      return runIdempotent(
        this[IDEMPOTENCY],
        req,
        route,
        () => handler.apply(this, params),
        prepare && (() => prepare.apply(this as never, params)),
      );
    };
    // The metadata other decorators put on the handler (route, status, docs) moves to the wrapper.
    for (const metadataKey of Reflect.getMetadataKeys(handler)) {
      Reflect.defineMetadata(metadataKey, Reflect.getMetadata(metadataKey, handler), wrapped);
    }
    Reflect.defineMetadata(IDEMPOTENT_KEY, true, wrapped);
    Object.defineProperty(wrapped, 'name', { value: handler.name });
    descriptor.value = wrapped;
    documented(target, key, descriptor);
    return descriptor;
  };
}

/** The status Nest answers a success of the handler with: its @HttpCode, else 201 for POST and 200 for the rest. */
function successStatusOf(handler: object): number {
  const code = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
  if (code !== undefined) return code;
  return Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.POST ? HttpStatus.CREATED : HttpStatus.OK;
}
