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
  /**
   * A success whose body is not what the API documents (not JSON, a documented property missing or
   * of another type, an id that is not an int64, a next-page link outside `baseUrl`).
   */
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

/**
 * Marks a PlantStoreError from any copy of this package: an application that both imports (ESM)
 * and requires (CommonJS) the client loads two, and each has its own class.
 */
const BRAND = Symbol.for('@plant-store/client.PlantStoreError');

/**
 * The one error every call of the client throws (usage errors aside: an argument or a token that
 * cannot work is a TypeError or RangeError).
 */
export class PlantStoreError extends Error {
  /** `instanceof PlantStoreError` holds for an error of either build, ESM or CommonJS. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== PlantStoreError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

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
    Object.defineProperty(this, BRAND, { value: true });
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
