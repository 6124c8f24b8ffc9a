/**
 * The bounds of the lingering close (lingering-close.ts): what a connection answered before its
 * request's body arrived may still cost.
 */

/**
 * How long a connection answered before its request's body had arrived keeps reading it, at most,
 * from the answer on (nginx's `lingering_time`).
 */
export const LINGER_MAX_MS = 30_000;

/** How long it waits for more of the body, at most (nginx's `lingering_timeout`). */
export const LINGER_IDLE_MS = 5_000;

/** How many bytes it reads after the answer, at most: an endless body costs no more. */
export const LINGER_MAX_BYTES = 4 * 1024 * 1024;
