/**
 * The rate limit's window: RATE_LIMIT_PER_MINUTE requests per caller in it, and a caller past them
 * refused for as long again (the RateLimit-Policy field's `w`; docs/api.md states it).
 */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The longest a count waits for Redis before the insurance limiter in memory takes it. */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/** After a lost connection the client tries again this much later per attempt made, up to the most. */
export const REDIS_RECONNECT_STEP_MS = 200;
export const REDIS_RECONNECT_MAX_MS = 2000;
