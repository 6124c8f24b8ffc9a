/** What went wrong: an HTTP answer that is not a success, or no usable answer at all. */
export type PlantStoreErrorKind =
  /** The service answered with a status that is not 2xx: see `status` and `message`. */
  | 'http'
  /** No answer: the connection could not be made or was lost (DNS, refused, reset, TLS). */
  | 'network'
  /** No answer within `timeoutMs`. */
  | 'timeout'
  /** The caller's `signal` aborted the call. */
  | 'aborted'
  /** A success whose body is not what the API documents (not JSON, an id that is not an int64...). */
  | 'invalid-response';

export interface PlantStoreErrorInit {
  kind: PlantStoreErrorKind;
  status?: number;
  message: string;
  attempts: number;
  retryAfterMs?: number;
  requestId?: string;
  cause?: unknown;
}

/** The one error every call of the client throws (argument errors aside: those are TypeError/RangeError). */
export class PlantStoreError extends Error {
  override readonly name = 'PlantStoreError';
  readonly kind: PlantStoreErrorKind;
  /** The HTTP status of the answer; 0 when there was none (network, timeout, aborted). */
  readonly status: number;
  /** How many attempts the call made, retries included. */
  readonly attempts: number;
  /** The wait the service asked for (`Retry-After` of a 429 or 503), in milliseconds. */
  readonly retryAfterMs?: number;
  /** The service's `X-Request-Id` for the last attempt: quote it when reporting a problem. */
  readonly requestId?: string;
  /**
   * The `Idempotency-Key` a failed create sent (the caller's, or the one the client made): sending
   * the create again with it gets the first attempt's answer instead of a second resource.
   */
  idempotencyKey?: string;

  constructor(init: PlantStoreErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status ?? 0;
    this.attempts = init.attempts;
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
  }

  /** 4xx: the request itself is refused; sending it again unchanged gives the same answer (429 aside). */
  get isClientError(): boolean {
    return this.status >= 400 && this.status < 500;
  }

  /** 5xx: the service failed; the same request may succeed later. */
  get isServerError(): boolean {
    return this.status >= 500 && this.status < 600;
  }
}
