/** The bounds of authentication's memory: the caches that keep a request to one statement. */

/** Most valid token lookups remembered at once; the oldest is dropped first. */
export const TOKEN_CACHE_MAX_ENTRIES = 10_000;

/**
 * Most refused secrets (unknown, expired, revoked) remembered at once, apart from the valid ones:
 * a flood of made-up tokens can only push out other made-up tokens, never a real one.
 */
export const REJECTED_CACHE_MAX_ENTRIES = 1_000;

/** The longest user id, a `pst_` token's or an identity provider's owner claim, in characters. */
export const USER_ID_MAX_LENGTH = 128;

/** Most verified tokens remembered at once; the oldest is dropped first. */
export const JWT_CACHE_MAX_ENTRIES = 10_000;
