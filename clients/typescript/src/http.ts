import { randomUUID } from 'node:crypto';
import { PlantStoreError } from './errors';
import { parseJson } from './json';
import { backoffDelay, parseRetryAfter, sleep } from './retry';

export interface RetryEvent {
  method: string;
  url: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  error: PlantStoreError;
}

/** What `hooks.beforeRequest` is told of an attempt, just before it is sent. */
export interface RequestEvent {
  method: string;
  url: string;
  /** The attempt of the call, from 1. */
  attempt: number;
  /** The headers the caller set (`headers` options): never `Authorization`. */
  headers: Record<string, string>;
}

/** What `hooks.afterResponse` is told of an attempt once it has ended, answered or not. */
export interface ResponseEvent extends RequestEvent {
  /** The answer's HTTP status; 0 when none came (network failure, timeout, abort). */
  status: number;
  /** From sending the request to the end of the answer's body. */
  durationMs: number;
  /** The answer's `X-Request-Id`. */
  requestId?: string;
  /** What this attempt's outcome is, when it is not a success: a non-2xx answer, or none. */
  error?: PlantStoreError;
}

/** Called for every attempt, retries included, for logs and metrics; what they return is ignored. */
export interface Hooks {
  beforeRequest?: (event: RequestEvent) => void;
  /** Called once after each `beforeRequest`. */
  afterResponse?: (event: ResponseEvent) => void;
}

export interface TransportOptions {
  token: string | (() => string | Promise<string>);
  timeoutMs: number;
  /** The whole `User-Agent` value. */
  userAgent: string;
  /** Sent on every request, below the client's own headers. */
  headers: Record<string, string>;
  hooks: Hooks;
  retries: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  maxRetryAfterMs: number;
  fetch: typeof fetch;
  random: () => number;
  onRetry?: (event: RetryEvent) => void;
}

export interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: URL;
  /** Already written as JSON text (ids exact). */
  body?: string;
  /** The body's type, `application/json` unless said (a JSON Merge Patch is `application/merge-patch+json`). */
  contentType?: string;
  /** Sent as `Idempotency-Key` on every attempt of a POST, PATCH or DELETE; without one a POST or PATCH is never retried. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** This call's own `retries`, instead of the client's. */
  retries?: number;
  /** This call's own `timeoutMs`, instead of the client's. */
  timeoutMs?: number;
  /** This call's own headers, over the client's `headers`. */
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  url: URL;
  /** Attempts the call took to get this answer. */
  attempts: number;
  /** The `Idempotency-Key` the call sent. */
  idempotencyKey?: string;
}

/** Answers after which the same request may well succeed: overload, unavailability, a gateway's failure. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** An Idempotency-Key a header can carry and the service can store (up to 255 characters). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** What a character no token may hold is called in an error, which never quotes the token around it. */
function characterName(code: number): string {
  const names: Record<number, string> = {
    0x00: 'a NUL',
    0x09: 'a tab',
    0x0a: 'a line feed (LF)',
    0x0d: 'a carriage return (CR)',
    0x20: 'a space',
  };
  if (names[code] !== undefined) return names[code];
  if (code < 0x20 || code === 0x7f)
    return `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return 'a character outside visible ASCII';
}

/**
 * A bearer token as it can be sent: visible ASCII only (RFC 6750's b64token, a JWT, a `pst_`
 * token), so no line break or NUL can reach a header. Refused with a TypeError that names what is
 * wrong and where, never the token: fetch's own refusal quotes the whole header, token and all.
 * `source` is what the message calls the token.
 */
export function checkedToken(token: unknown, source: string): string {
  if (typeof token !== 'string') throw new TypeError(`${source} is not a string`);
  if (token === '') throw new TypeError(`${source} is empty`);
  const at = token.search(/[^\x21-\x7e]/);
  if (at === -1) return token;
  throw new TypeError(
    `${source} has ${characterName(token.charCodeAt(at))} at character ${at + 1} of ${token.length}: ` +
      'a bearer token is visible ASCII only (one read from a file may need trimming)',
  );
}

export function newIdempotencyKey(given: string | undefined): string {
  if (given === undefined) return randomUUID();
  if (!IDEMPOTENCY_KEY.test(given)) {
    throw new TypeError('idempotencyKey must be 1 to 255 visible ASCII characters');
  }
  return given;
}

/** One call: its attempts, their timeouts, the waits between them, and what counts as its answer. */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  async send(call: Call): Promise<Answer> {
    const retryable = (call.method !== 'POST' && call.method !== 'PATCH') || call.idempotencyKey !== undefined;
    const headers = { ...this.options.headers, ...call.headers };
    // Whether an earlier attempt may have reached the service and done its work (its answer lost).
    let mayHaveApplied = false;
    for (let attempt = 1; ; attempt += 1) {
      // Asked on every attempt, so a refreshed token is used; its failures are the caller's own,
      // and so is a token it gives that cannot be sent: refused before anything is, never retried.
      const token =
        typeof this.options.token === 'function'
          ? checkedToken(await this.options.token(), "the token function's token")
          : this.options.token;
      if (call.signal?.aborted) throw withKey(aborted(call.signal.reason, attempt), call);
      const event: RequestEvent = { method: call.method, url: call.url.href, attempt, headers: { ...headers } };
      this.options.hooks.beforeRequest?.(event);
      const started = performance.now();
      let answer: Answer | undefined;
      let error: PlantStoreError | undefined;
      try {
        answer = await this.attempt(call, attempt, { ...headers, ...this.ownHeaders(call, token) });
        // A delete whose first answer was lost and whose retry finds nothing has, as far as the
        // client can tell, done what it was asked: the resource is gone (docs in README.md).
        const gone = call.method === 'DELETE' && answer.status === 404 && mayHaveApplied;
        if (!isSuccess(answer.status) && !gone) error = httpError(answer);
      } catch (caught) {
        error = this.failure(caught, call, attempt);
      }
      if (this.options.hooks.afterResponse) {
        const ended: ResponseEvent = { ...event, status: answer?.status ?? 0, durationMs: performance.now() - started };
        const requestId = answer?.headers.get('x-request-id');
        if (requestId) ended.requestId = requestId;
        if (error) ended.error = error;
        this.options.hooks.afterResponse(ended);
      }
      if (error === undefined) return answer as Answer;
      const delayMs = retryable ? this.retryDelay(error, attempt, call) : undefined;
      if (delayMs === undefined) throw withKey(error, call);
      mayHaveApplied ||= mayHaveReachedTheService(error);
      this.options.onRetry?.({ method: call.method, url: call.url.href, attempt, delayMs, error });
      try {
        await sleep(delayMs, call.signal);
      } catch (reason) {
        throw withKey(aborted(reason, attempt), call);
      }
    }
  }

  /** The headers the client owns: the caller's cannot replace them (see OWN_HEADERS). */
  private ownHeaders(call: Call, token: string): Record<string, string> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: `Bearer ${token}`,
      'User-Agent': this.options.userAgent,
    };
    if (call.body !== undefined) headers['Content-Type'] = call.contentType ?? 'application/json';
    if (call.idempotencyKey !== undefined) headers['Idempotency-Key'] = call.idempotencyKey;
    return headers;
  }

  private async attempt(call: Call, attempt: number, headers: Record<string, string>): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), this.timeoutMs(call));
    const onAbort = () => controller.abort(new CallerAbort(call.signal?.reason));
    call.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await untilAborted(
        this.options.fetch(call.url, {
          method: call.method,
          headers,
          body: call.body,
          signal: controller.signal,
          // A redirect would resend the token elsewhere, or turn a POST into a GET: report it instead.
          redirect: 'manual',
        }),
        controller.signal,
      );
      // The body is read within the same timeout: a stalled body is a timed-out attempt.
      const text = await untilAborted(response.text(), controller.signal);
      return {
        status: response.status,
        headers: response.headers,
        text,
        url: call.url,
        attempts: attempt,
        idempotencyKey: call.idempotencyKey,
      };
    } catch (error) {
      // fetch rejects with the abort reason, or with an AbortError that hides it.
      throw controller.signal.aborted ? controller.signal.reason : error;
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    }
  }

  private timeoutMs(call: Call): number {
    return call.timeoutMs ?? this.options.timeoutMs;
  }

  private failure(caught: unknown, call: Call, attempt: number): PlantStoreError {
    if (caught instanceof PlantStoreError) return caught;
    if (caught instanceof CallerAbort) return aborted(caught.reason, attempt);
    if (caught instanceof AttemptTimeout) {
      return new PlantStoreError({
        kind: 'timeout',
        message: `${call.method} ${call.url.pathname} got no answer within ${this.timeoutMs(call)} ms`,
        attempts: attempt,
      });
    }
    const cause = (caught as { cause?: { message?: string } }).cause;
    const detail = errorCode(caught) ?? cause?.message ?? (caught as Error).message;
    return new PlantStoreError({
      kind: 'network',
      message: `${call.method} ${call.url.pathname} failed without an answer: ${detail}`,
      attempts: attempt,
      cause: caught,
    });
  }

  /** How long to wait before the next attempt, or undefined when the call should fail now. */
  private retryDelay(error: PlantStoreError, attempt: number, call: Call): number | undefined {
    if (attempt > (call.retries ?? this.options.retries) || call.signal?.aborted) return undefined;
    const { backoffBaseMs, backoffMaxMs, maxRetryAfterMs, random } = this.options;
    switch (error.kind) {
      case 'network':
      case 'timeout':
        return backoffDelay(attempt, backoffBaseMs, backoffMaxMs, random);
      case 'http':
        if (!RETRYABLE_STATUSES.has(error.status)) return undefined;
        if (error.retryAfterMs === undefined) return backoffDelay(attempt, backoffBaseMs, backoffMaxMs, random);
        // A longer wait than the caller allows is the caller's to schedule: fail now, with retryAfterMs.
        return error.retryAfterMs <= maxRetryAfterMs ? error.retryAfterMs : undefined;
      default:
        return undefined;
    }
  }
}

/** Reads a JSON success body, exact for ids; a body that is not JSON is the service's fault, not the caller's. */
export function readJson(answer: Answer): unknown {
  try {
    return parseJson(answer.text);
  } catch (error) {
    throw invalidResponse(answer, `not JSON: ${(error as Error).message}`, error);
  }
}

/** A success that is not what the API documents (not JSON, not the documented fields, a foreign link). */
export function invalidResponse(answer: Answer, problem: string, cause?: unknown): PlantStoreError {
  const error = new PlantStoreError({
    kind: 'invalid-response',
    status: answer.status,
    message: `The answer to ${answer.url.pathname} is not what the API documents: ${problem}`,
    attempts: answer.attempts,
    requestId: answer.headers.get('x-request-id') ?? undefined,
    cause,
  });
  // The create may well have been done: its key gets the same answer again, not a second resource.
  error.idempotencyKey = answer.idempotencyKey;
  return error;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

function httpError(answer: Answer): PlantStoreError {
  let message = `${answer.url.pathname} answered ${answer.status}`;
  try {
    const body = JSON.parse(answer.text) as { message?: unknown };
    if (typeof body.message === 'string' && body.message.length > 0) message = body.message;
  } catch {
    // Not the service's {error, message} body (a proxy's page, say): the status says enough.
  }
  return new PlantStoreError({
    kind: 'http',
    status: answer.status,
    message,
    attempts: answer.attempts,
    retryAfterMs: RETRYABLE_STATUSES.has(answer.status)
      ? parseRetryAfter(answer.headers.get('retry-after'))
      : undefined,
    requestId: answer.headers.get('x-request-id') ?? undefined,
  });
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts: a timeout holds
 * even with a `fetch` option that ignores its signal.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Failures that say the request never reached the service: no connection was made. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/**
 * Whether the failed attempt may have been carried out with its answer lost. A 429 is answered
 * before the request is looked at; a refused connection carried nothing.
 */
function mayHaveReachedTheService(error: PlantStoreError): boolean {
  if (error.kind === 'http') return error.status !== 429;
  if (error.kind === 'network') return !NOT_SENT.has(errorCode(error.cause) ?? '');
  return error.kind === 'timeout';
}

/** The system error code of a failed fetch (undici puts it on the cause, sometimes one level deeper). */
function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string') return code;
    current = cause;
  }
  return undefined;
}

/** A failed create tells its key, so the caller can send it again later with the same one. */
function withKey(error: PlantStoreError, call: Call): PlantStoreError {
  if (call.idempotencyKey !== undefined) error.idempotencyKey = call.idempotencyKey;
  return error;
}

function aborted(reason: unknown, attempt: number): PlantStoreError {
  return new PlantStoreError({ kind: 'aborted', message: 'The call was aborted', attempts: attempt, cause: reason });
}

class AttemptTimeout extends Error {}

class CallerAbort extends Error {
  constructor(readonly reason: unknown) {
    super('aborted');
  }
}
