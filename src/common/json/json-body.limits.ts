/**
 * The limits of a JSON request body: part of the contract (docs/api.md states them from here) and
 * what keeps a body cheap to read. Fixed, not settings: a client must be able to rely on them.
 */

/** The most a request body may be, on the wire and once decoded alike. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/** Far deeper than any plant (depth 1); deep enough for any honest client. */
export const MAX_JSON_DEPTH = 32;
