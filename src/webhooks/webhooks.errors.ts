import { BadRequestException, ConflictException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { errorDoc } from '../common/openapi/error-doc';
import { MOMENTARY } from '../idempotency/final-answer';
import { UnresolvedHostError } from './address-policy';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from './webhooks.limits';

export class TooManySubscriptions extends ConflictException {
  static readonly doc = errorDoc(
    new TooManySubscriptions(),
    `The user already has ${MAX_SUBSCRIPTIONS_PER_OWNER} subscriptions`,
  );

  constructor() {
    super(`At most ${MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions per user; delete one before adding another`);
  }
}

/**
 * The URL's host gave no answer just now. Still the client's 400 (its host name, in most cases,
 * does not exist), but about the moment: an Idempotency-Key does not keep it, so a retry looks again.
 */
export class WebhookHostUnresolved extends BadRequestException {
  readonly [MOMENTARY] = true;

  static readonly doc = errorDoc(
    new WebhookHostUnresolved(new UnresolvedHostError('nothing.invalid')),
    'The host of url did not resolve (no such name, or no answer in time)',
  );

  constructor(cause: UnresolvedHostError) {
    super(cause.message);
  }
}

/** Also the answer for another user's subscription. */
export class WebhookNotFound extends NotFoundException {
  static readonly doc = errorDoc(
    new WebhookNotFound(42n),
    'No such subscription for this user (one of another user is not told apart from a missing one)',
  );

  constructor(id: bigint) {
    super(`Webhook subscription ${id} not found`);
  }
}

/** The feature is off (WEBHOOK_SECRET_KEY unset), not the database down: retrying does not help. */
export class WebhooksNotConfigured extends ServiceUnavailableException {
  static readonly doc = errorDoc(
    new WebhooksNotConfigured(),
    'Webhooks are not configured on this server (`WEBHOOK_SECRET_KEY` unset)',
  );

  constructor() {
    super('Webhooks are not configured on this server: its operator must set WEBHOOK_SECRET_KEY');
  }
}
