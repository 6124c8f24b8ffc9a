import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ErrorDoc } from '../common/openapi/error-doc';
import { IdempotencyKeyInFlight, IdempotencyKeyReused } from './idempotency.errors';
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

/**
 * Documents that a POST that creates something accepts `Idempotency-Key` (its handler runs through
 * runIdempotent): a retry of the same request gets the
 * first answer again instead of creating twice. `conflict` is the route's own reason for 409, which
 * shares the status with "a request with this key is still in progress".
 */
export function Idempotent(conflict: ErrorDoc): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        'Makes the request safe to retry (draft-ietf-httpapi-idempotency-key-header): 1 to 255 visible ASCII ' +
        'characters, unique per request, e.g. a UUID. The answer to the first request with the key (success, ' +
        'or a 4xx error) is kept for IDEMPOTENCY_TTL (24 hours by default) and given again, with ' +
        '`Idempotent-Replayed: true`, to every repeat of the same request (same method, path and JSON body) ' +
        'by the same user. A 5xx answer is not kept: the retry runs again. Without the field nothing is ' +
        'kept. See docs/api.md.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
    }),
    ApiErrors(
      { ...conflict, description: `${conflict.description}; or ${IdempotencyKeyInFlight.doc.description}` },
      IdempotencyKeyReused.doc,
    ),
  );
}
