/**
 * The webhooks' limits: what a subscriber may ask for, what a receiver's answer may cost, and how long
 * deliveries are kept. docs/webhooks.md and the OpenAPI document state them from here.
 */

/** Each event of a plant change is recorded once per subscription: the bound keeps that fan-out small. */
export const MAX_SUBSCRIPTIONS_PER_OWNER = 10;

/** The longest description, in characters (docs/api.md and docs/webhooks.md state it). */
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 255;

/** The longest URL a subscription may have, in characters. */
export const MAX_URL_LENGTH = 2048;

/** Attempts shown by GET /webhooks/{id}/deliveries, newest first. */
export const RECENT_ATTEMPTS = 100;

/** Receivers answer with a status; a body past this is not worth the bandwidth. */
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

/** Finished deliveries and attempts are kept this long for GET /webhooks/{id}/deliveries. */
export const RETENTION_MS = 7 * 86_400_000;

/** How often an instance deletes what RETENTION_MS no longer keeps. */
export const PRUNE_EVERY_MS = 600_000;

/**
 * Subscriptions one claim serves, each with a statement of its own; when more are due, the next
 * claim follows at once.
 */
export const MAX_SUBSCRIPTIONS_PER_CLAIM = 64;

/**
 * A recovery puts deliveries back in the queue this many at a time, and only while its subscription
 * has fewer than this many pending: a backlog goes out at the pace the subscription is delivered,
 * never as one burst of rows.
 */
export const RECOVER_BATCH = 500;

/** The widest span of delivery ids one step of a recovery reads through, so each step's statement is bounded. */
export const RECOVER_ID_WINDOW = 100_000;

/** Recoveries an instance advances in one poll. */
export const RECOVERIES_PER_POLL = 16;

/** How long the secret a rotation replaces keeps signing when the call does not say. */
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400;

/** The longest a replaced secret may keep signing: long enough to roll a secret out, short enough to retire a leaked one. */
export const MAX_SECRET_GRACE_SECONDS = 7 * 86_400;

/** Events in a page of GET /events when the caller does not say. */
export const EVENTS_DEFAULT_PAGE = 100;

/** The most events in a page of GET /events, whatever `limit` asks. */
export const EVENTS_MAX_PAGE = 1000;
