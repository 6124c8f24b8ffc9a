/** The bounds of what a client may put in the log. */

/** The longest request id a client may send (`X-Request-Id`), in visible ASCII characters; a longer one is replaced. */
export const REQUEST_ID_MAX_LENGTH = 128;
