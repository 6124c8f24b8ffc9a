import { HttpException } from '@nestjs/common';

/**
 * The mark of a refusal that depends on the moment, such as a host name that did not resolve just
 * now: an error class whose cause may be gone a moment later sets `readonly [MOMENTARY] = true`.
 */
export const MOMENTARY = Symbol('momentary');

/** Statuses that are about the moment by definition: 408 Request Timeout, 425 Too Early, 429 Too Many Requests. */
const MOMENTARY_STATUSES: ReadonlySet<number> = new Set([408, 425, 429]);

/**
 * The one rule of what an `Idempotency-Key` keeps of a failed request: its answer, only when the
 * same request run again would get the same answer. That is a client error (4xx) that is neither
 * of a status about the moment nor marked MOMENTARY. A server failure (5xx), an unexpected error
 * and a momentary refusal free the key instead, so the client's retry, which is what the key is
 * for, runs afresh.
 */
export function isFinalRefusal(error: unknown): error is HttpException {
  if (!(error instanceof HttpException)) return false;
  const status = error.getStatus();
  if (status < 400 || status >= 500 || MOMENTARY_STATUSES.has(status)) return false;
  return (error as { [MOMENTARY]?: boolean })[MOMENTARY] !== true;
}
