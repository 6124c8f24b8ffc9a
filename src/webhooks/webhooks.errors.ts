import { BadRequestException, ConflictException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { errorDoc } from '../common/openapi/error-doc';
import { MOMENTARY } from '../idempotency/final-answer';
import { UnresolvedHostError } from './deliveries/address-policy';
import { MAX_SUBSCRIPTIONS_PER_OWNER, RETENTION_MS } from './webhooks.limits';

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

/** Resending or recovering a disabled subscription would only hold the deliveries again. */
export class WebhookDisabled extends ConflictException {
  static readonly doc = errorDoc(
    new WebhookDisabled(42n),
    'The subscription is disabled: re-enable it (`PATCH` with `enabled: true`) first',
  );

  constructor(id: bigint) {
    super(`Webhook subscription ${id} is disabled; re-enable it (PATCH with "enabled": true) first`);
  }
}

/** A test of the subscription is already being made: one at a time, as each may take the whole attempt timeout. */
export class WebhookTestInProgress extends ConflictException {
  readonly [MOMENTARY] = true;

  static readonly doc = errorDoc(
    new WebhookTestInProgress(42n),
    'A test of this subscription is already running (retry once it has answered)',
  );

  constructor(id: bigint) {
    super(`A test of webhook subscription ${id} is already running; retry once it has answered`);
  }
}

/** Also the answer for a delivery older than the retention, or of another subscription. */
export class WebhookDeliveryNotFound extends NotFoundException {
  static readonly doc = errorDoc(
    new WebhookDeliveryNotFound(42n, 'evt_1842'),
    `No delivery of that event for this subscription (deliveries are kept ${RETENTION_MS / 86_400_000} days)`,
  );

  constructor(id: bigint, eventId: string) {
    super(`Webhook subscription ${id} has no delivery of event ${eventId}`);
  }
}

/** `since` of a recovery: not in the future, and within what is kept. */
export class RecoverSinceOutOfRange extends BadRequestException {
  static readonly doc = errorDoc(
    new RecoverSinceOutOfRange(),
    `since is in the future, or more than ${RETENTION_MS / 86_400_000} days ago`,
  );

  constructor() {
    super(
      `since must be within the last ${RETENTION_MS / 86_400_000} days (deliveries are kept that long), and not in the future`,
    );
  }
}

/** A `webhook-id` in a path that no delivery could have. */
export class InvalidWebhookId extends BadRequestException {
  static readonly doc = errorDoc(new InvalidWebhookId(), 'eventId is not a webhook-id: evt_ or msg_ and a number');

  constructor() {
    super('eventId must be a webhook-id, evt_ or msg_ and its number, as GET /webhooks/{id}/deliveries shows it');
  }
}
