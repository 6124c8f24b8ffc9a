import { BadRequestException, ConflictException, UnprocessableEntityException } from '@nestjs/common';
import { errorDoc } from '../common/openapi/error-doc';
import { MOMENTARY } from './final-answer';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency.limits';

export class InvalidIdempotencyKey extends BadRequestException {
  static readonly doc = errorDoc(new InvalidIdempotencyKey(), 'An invalid `Idempotency-Key`, or the field twice');

  constructor() {
    super(
      `Idempotency-Key must be one value of 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (0x21 to 0x7E)`,
    );
  }
}

/**
 * The first request with this key is still running. It shares 409 with the route's own conflict.
 * It is about the moment: never kept as the key's answer.
 */
export class IdempotencyKeyInFlight extends ConflictException {
  readonly [MOMENTARY] = true;

  static readonly doc = errorDoc(
    new IdempotencyKeyInFlight(),
    'A request with the same Idempotency-Key is still in progress (retry later)',
  );

  constructor() {
    super('A request with this Idempotency-Key is still in progress; retry once it has been answered');
  }
}

export class IdempotencyKeyReused extends UnprocessableEntityException {
  static readonly doc = errorDoc(
    new IdempotencyKeyReused(),
    'The Idempotency-Key was already used for a different request by this user',
  );

  constructor() {
    super('This Idempotency-Key was already used for a different request (method, path or body); use a new key');
  }
}

/**
 * The stored answer of a key cannot be given again: it is sealed under a key of WEBHOOK_SECRET_KEY
 * this instance does not hold (retired too early, or not yet rolled out to it). Nothing failed now:
 * the first request was processed, and running it again could create twice. So the client is told
 * to stop retrying with this key and to look up what the first request made. It shares 422 with
 * IdempotencyKeyReused, which is likewise "not with this key".
 */
export class IdempotentAnswerUnavailable extends UnprocessableEntityException {
  static readonly doc = errorDoc(
    new IdempotentAnswerUnavailable(),
    'The first request with this Idempotency-Key was processed, but its stored answer can no longer be given (it was sealed under a key the server no longer holds): look up what it created instead of retrying with this key',
  );

  constructor() {
    super(
      'The request with this Idempotency-Key was processed, but its stored answer is no longer available; look up what it created instead of retrying with this key',
    );
  }
}
