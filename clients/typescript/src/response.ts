import type { Answer } from './http';

/** The service's rate-limit state after a call (IETF `RateLimit` and `RateLimit-Policy` fields). */
export interface RateLimit {
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window starts anew. */
  resetSeconds: number;
  /** Requests allowed per window, when `RateLimit-Policy` says. */
  limit?: number;
  /** The window's length in seconds, when `RateLimit-Policy` says. */
  windowSeconds?: number;
}

/** What the answer to a successful call said besides its body. */
export interface ApiResponse {
  /** The HTTP status: 404 for a retried delete whose earlier attempt had already deleted (see README). */
  status: number;
  /** Every header of the answer. */
  headers: Headers;
  /** The URL the answer came from. */
  url: string;
  /** The answer's `X-Request-Id`: quote it when reporting a problem. */
  requestId?: string;
  /** True when a create was answered with the first answer to its `Idempotency-Key` (`Idempotent-Replayed: true`). */
  replayed: boolean;
  /** Present when the answer carries the rate-limit fields. */
  rateLimit?: RateLimit;
  /** Attempts the call took, retries included. */
  attempts: number;
  /** The `Idempotency-Key` a create sent (the caller's, or the one the client made). */
  idempotencyKey?: string;
}

/** A call's data with the metadata of the answer it came in. */
export interface WithResponse<T> {
  data: T;
  response: ApiResponse;
}

export function apiResponse(answer: Answer): ApiResponse {
  const response: ApiResponse = {
    status: answer.status,
    headers: answer.headers,
    url: answer.url.href,
    replayed: answer.headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true',
    attempts: answer.attempts,
  };
  const requestId = answer.headers.get('x-request-id');
  if (requestId !== null) response.requestId = requestId;
  const rateLimit = parseRateLimit(answer.headers.get('ratelimit'), answer.headers.get('ratelimit-policy'));
  if (rateLimit !== undefined) response.rateLimit = rateLimit;
  if (answer.idempotencyKey !== undefined) response.idempotencyKey = answer.idempotencyKey;
  return response;
}

/**
 * The first policy of a `RateLimit` field (`"default";r=0;t=42`) with its quota and window from the
 * `RateLimit-Policy` item of the same name (`"default";q=600;w=60`); undefined without `r` and `t`.
 */
export function parseRateLimit(field: string | null, policyField: string | null): RateLimit | undefined {
  const [current] = items(field);
  const remaining = current?.params.get('r');
  const resetSeconds = current?.params.get('t');
  if (remaining === undefined || resetSeconds === undefined) return undefined;
  const rateLimit: RateLimit = { remaining, resetSeconds };
  const policy = items(policyField).find((item) => item.name === current.name);
  const limit = policy?.params.get('q');
  const windowSeconds = policy?.params.get('w');
  if (limit !== undefined) rateLimit.limit = limit;
  if (windowSeconds !== undefined) rateLimit.windowSeconds = windowSeconds;
  return rateLimit;
}

/** The items of a structured-field list whose parameters are integers; other parameters are skipped. */
function items(field: string | null): { name: string; params: Map<string, number> }[] {
  if (!field) return [];
  return field.split(',').map((item) => {
    const [name, ...params] = item.split(';').map((part) => part.trim());
    const values = new Map<string, number>();
    for (const param of params) {
      const match = /^([a-z*][a-z0-9_.*-]*)=(\d{1,15})$/.exec(param);
      if (match) values.set(match[1], Number(match[2]));
    }
    return { name: name.replace(/^"(.*)"$/, '$1'), params: values };
  });
}
