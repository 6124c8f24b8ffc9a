/**
 * The rate limit's window: RATE_LIMIT_PER_MINUTE requests per caller in it, and a caller past them
 * refused for as long again (the RateLimit-Policy field's `w`; docs/api.md states it).
 */
export const RATE_LIMIT_WINDOW_MS = 60_000;
