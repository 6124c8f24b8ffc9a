/** The bounds of Idempotency-Key: how long a request holds its key, and how expired keys are cleared. */

/**
 * How long a request holds its key before another may take it over: longer than any request runs
 * (a webhook's address check is bounded by WEBHOOK_TIMEOUT_MS, statements by the DB timeouts), so it
 * only runs out when the instance died or lost the database mid-request.
 */
export const IN_FLIGHT_LEASE_MS = 30_000;

/** The longest `Idempotency-Key`, in visible ASCII characters (what the key's column holds). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** An instance deletes expired keys at most this often, in batches, while keyed requests arrive. */
export const PURGE_INTERVAL_MS = 60_000;
/** Expired keys deleted per statement, and statements per round: no purge holds locks for long. */
export const PURGE_BATCH = 1000;
export const PURGE_MAX_BATCHES = 10;
