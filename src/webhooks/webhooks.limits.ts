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
