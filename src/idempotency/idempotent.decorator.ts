import { HttpCode, Type, applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import { TakesJsonBody } from '../common/json/json-body.guard';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ErrorDoc } from '../common/openapi/error-doc';
import { InvalidRequest } from '../common/validation/validation.errors';
import {
  IdempotencyKeyInFlight,
  IdempotencyKeyReused,
  IdempotentAnswerUnavailable,
  InvalidIdempotencyKey,
} from './idempotency.errors';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from './idempotency-key';

/** The header of a replayed answer, for the route's success response in the OpenAPI document. */
export const REPLAYED_RESPONSE_HEADERS = {
  [REPLAYED_HEADER]: {
    description:
      '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`, ' +
      'given again instead of processing the request twice (errors 4xx are replayed too)',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** What a POST that creates something from a JSON body declares, once for its decorator and its handler. */
export interface CreatingRoute {
  /** The status of its success answer. */
  status: 200 | 201;
  /** The schema of its success answer, and what that answer is. */
  type: Type<unknown>;
  description: string;
  /** The route's own reason for 409, which shares the status with a key still in progress. */
  conflict: ErrorDoc;
  /** The success answer carries a secret: it is stored sealed (WEBHOOK_SECRET_KEY). */
  sealAnswer?: boolean;
}

/**
 * The one decorator of a POST that creates something from a JSON body, with the `route` its handler
 * passes to runIdempotent: the body read after the guards (TakesJsonBody), the success answer with
 * `Idempotent-Replayed`, the validation refusal, and `Idempotency-Key`. Every operation that
 * documents the key is held to replaying by test/idempotent-routes.e2e-spec.ts.
 */
export function CreatesFromJsonBody(route: CreatingRoute): MethodDecorator {
  // In the order stacked decorators would apply, the lowest first.
  return applyDecorators(
    TakesJsonBody(),
    idempotencyKey(route.conflict, route.sealAnswer ?? false),
    ApiErrors(InvalidRequest.doc),
    ApiResponse({
      status: route.status,
      type: route.type,
      description: route.description,
      headers: REPLAYED_RESPONSE_HEADERS,
    }),
    HttpCode(route.status),
  );
}

/**
 * `Idempotency-Key` and its refusals, for the OpenAPI document; a route whose answer is stored sealed
 * may also find it sealed under a key no longer held, which shares 422 with a reused key.
 */
function idempotencyKey(conflict: ErrorDoc, sealed: boolean): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        'Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII ' +
        'characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, ' +
        'or a 4xx refusal) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with ' +
        '`Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) ' +
        'by the same user. An answer that depends on the moment is not kept, and the retry runs again: a 5xx, ' +
        'a 408, 425 or 429, the 409 of a request still in progress, and the 400 of a webhook URL whose host ' +
        'did not resolve. Without the field nothing is kept. See docs/api.md.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    }),
    ApiErrors(
      InvalidIdempotencyKey.doc,
      conflict,
      IdempotencyKeyInFlight.doc,
      IdempotencyKeyReused.doc,
      ...(sealed ? [IdempotentAnswerUnavailable.doc] : []),
    ),
  );
}
