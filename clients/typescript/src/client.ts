import { type ApiPromise, CallPromise } from './api-promise';
import {
  type Answer,
  type Call,
  type Hooks,
  type RetryEvent,
  Transport,
  checkedToken,
  invalidResponse,
  newIdempotencyKey,
} from './http';
import { assertInt64, writeJson } from './json';
import { isUnder, nextLink } from './link';
import { apiResponse, type WithResponse } from './response';
import { ANSWERS } from './answers';
import { type Expected, readChecked } from './shapes';
import type {
  CreatedWebhook,
  Event,
  NewPlant,
  NewWebhook,
  Plant,
  ResentWebhookDelivery,
  RotatedWebhook,
  Webhook,
  WebhookAttempt,
  WebhookChange,
  WebhookEvent,
  WebhookRecoveryStarted,
  WebhookSecretRotation,
  WebhookTestResult,
} from './types';
import { VERSION } from './version';

/** What the options of ClientOptions below are when left out (the README's table states them). */
export const DEFAULTS = {
  timeoutMs: 10_000,
  retries: 2,
  backoffBaseMs: 250,
  backoffMaxMs: 5_000,
  maxRetryAfterMs: 30_000,
} as const;

export interface ClientOptions {
  /** Where the service is, e.g. `https://plants.example.com` (a path prefix is kept). */
  baseUrl: string | URL;
  /** A bearer token (`pst_...` or an identity provider's access token), or a function asked before every attempt. */
  token: string | (() => string | Promise<string>);
  /** How long one attempt may take, answer body included. Default 10 000. */
  timeoutMs?: number;
  /** How many times a failed attempt is retried, when it may be (see README). Default 2: 3 attempts in all. */
  retries?: number;
  /** First backoff step; each retry doubles it, up to `backoffMaxMs`, half of it random. Default 250. */
  backoffBaseMs?: number;
  /** Default 5 000. */
  backoffMaxMs?: number;
  /** The longest `Retry-After` the client waits for; a longer one fails the call at once. Default 30 000. */
  maxRetryAfterMs?: number;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Told of every retry before its wait: for logs and metrics. */
  onRetry?: (event: RetryEvent) => void;
  /** Your product token(s), sent before the client's own: `User-Agent: my-app/2.1 plant-store-client/1.0.0`. */
  userAgent?: string;
  /** Headers sent on every request, e.g. a gateway's own key. The client's own headers cannot be set here. */
  headers?: Record<string, string>;
  /** Told of every attempt, before it is sent and once it has ended: for logs and metrics. */
  hooks?: Hooks;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** This call's own `retries`, instead of the client's. */
  retries?: number;
  /** This call's own `timeoutMs` for each of its attempts, instead of the client's. */
  timeoutMs?: number;
  /** This call's own headers, over the client's `headers`, e.g. its own `X-Request-Id`. */
  headers?: Record<string, string>;
}

export interface CreateOptions extends CallOptions {
  /**
   * Sent as `Idempotency-Key` on every attempt of this call, so a retry cannot create twice. The
   * client makes a random one when none is given; give your own to make a create idempotent
   * across calls (a restarted job creating the same thing again).
   */
  idempotencyKey?: string;
}

/**
 * A delete's options: as a create's, its `Idempotency-Key` lets a retry of a delete that went
 * through get that delete's 204 again, rather than a 404 for the plant it removed.
 */
export type DeleteOptions = CreateOptions;

export interface ListOptions extends CallOptions {
  /** Plants per page (1 to 2147483647); the service caps it (PLANTS_MAX_PAGE, 1000 by default). */
  limit?: number;
  /** Start after this id: plants come in ascending id order. */
  after?: bigint;
}

/** One page of a list: its plants and the metadata of the answer that carried them. */
export type Page<T> = WithResponse<T[]>;

/**
 * The options of a call that changes something and may be retried: its `Idempotency-Key` (made
 * by the client when none is given) makes a retry get the first answer rather than act twice.
 */
export type ChangeOptions = CreateOptions;

export interface EventListOptions extends CallOptions {
  /** Events per page (1 to 2147483647); the service caps it (1,000; 100 when left out). */
  limit?: number;
  /** `desc` (the default): newest first; `asc`: oldest first, the order to reconcile in. */
  order?: 'asc' | 'desc';
  /** Only events of this type. */
  type?: WebhookEvent;
  /** Only events that occurred at or after this time. */
  since?: Date;
  /** Only events that occurred before this time. */
  until?: Date;
  /** Start after this event id (`evt_<n>`), in the order asked for. */
  after?: string;
}

/** A list read a page at a time as the loop asks for more (see PlantList). */
export interface PagedList<T> extends AsyncIterableIterator<T> {
  pages(): AsyncIterableIterator<Page<T>>;
  toArray(options: { max: number }): Promise<T[]>;
}

/**
 * Every plant of the token's user, in id order, fetched a page at a time as the loop asks for
 * more. Iterated directly it yields plants, once; `pages()` and `toArray()` each read the list
 * anew from its start.
 */
export interface PlantList extends PagedList<Plant> {
  /** The pages, each with its answer's metadata. */
  pages(): AsyncIterableIterator<Page<Plant>>;
  /** The first `max` plants (`Infinity` for all of them); no page is fetched beyond them. */
  toArray(options: { max: number }): Promise<Plant[]>;
}

/** The token's user's webhook events, newest first unless asked otherwise, a page at a time. */
export type EventList = PagedList<Event>;

export interface PlantStoreClient {
  plants: {
    create(plant: NewPlant, options?: CreateOptions): ApiPromise<Plant>;
    list(options?: ListOptions): PlantList;
    delete(id: bigint, options?: DeleteOptions): ApiPromise<void>;
  };
  webhooks: {
    create(webhook: NewWebhook, options?: CreateOptions): ApiPromise<CreatedWebhook>;
    list(options?: CallOptions): ApiPromise<Webhook[]>;
    delete(id: bigint, options?: DeleteOptions): ApiPromise<void>;
    /** The subscription's last delivery attempts (up to 100, of the last 7 days). */
    deliveries(id: bigint, options?: CallOptions): ApiPromise<WebhookAttempt[]>;
    /** Changes what `change` gives (a JSON Merge Patch): `enabled: true` re-enables it. */
    update(id: bigint, change: WebhookChange, options?: ChangeOptions): ApiPromise<Webhook>;
    /** A new signing secret; the replaced one keeps signing for the grace period (24 hours unless said). */
    rotateSecret(id: bigint, rotation?: WebhookSecretRotation, options?: ChangeOptions): ApiPromise<RotatedWebhook>;
    /** Sends a `webhook.test` event now and says how the endpoint took it. */
    test(id: bigint, options?: ChangeOptions): ApiPromise<WebhookTestResult>;
    /** Sends the delivery of one event (its `eventId`, the `webhook-id`) again. */
    resend(id: bigint, eventId: string, options?: ChangeOptions): ApiPromise<ResentWebhookDelivery>;
    /** Sends again what failed or was held since `since`, at the pace the subscription is delivered. */
    recover(id: bigint, since: Date, options?: ChangeOptions): ApiPromise<WebhookRecoveryStarted>;
  };
  events: {
    /** The token's user's webhook events, as their deliveries carried them, a page at a time. */
    list(options?: EventListOptions): EventList;
  };
}

const INT32_MAX = 2 ** 31 - 1;

/** The client's own product token, after the caller's `userAgent`. */
const PRODUCT = `plant-store-client/${VERSION}`;

/** Headers the client sets itself, and what sets them instead of a `headers` option. */
const OWN_HEADERS: Readonly<Record<string, string>> = {
  authorization: 'the token option',
  'idempotency-key': 'the idempotencyKey option of a create or a delete',
  'user-agent': 'the userAgent option',
  accept: 'the client (JSON)',
  'content-type': 'the client (JSON)',
};

export function createClient(options: ClientOptions): PlantStoreClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new TypeError('baseUrl must be http(s)');
  // Relative paths resolve below the base, so `https://host/store` keeps its `/store`.
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function')
    throw new TypeError('No fetch: pass options.fetch (every supported Node.js line has one)');
  const transport = new Transport({
    token: typeof options.token === 'function' ? options.token : checkedToken(options.token, 'token'),
    timeoutMs: positive('timeoutMs', options.timeoutMs ?? DEFAULTS.timeoutMs),
    retries: count('retries', options.retries ?? DEFAULTS.retries),
    backoffBaseMs: count('backoffBaseMs', options.backoffBaseMs ?? DEFAULTS.backoffBaseMs),
    backoffMaxMs: count('backoffMaxMs', options.backoffMaxMs ?? DEFAULTS.backoffMaxMs),
    maxRetryAfterMs: count('maxRetryAfterMs', options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs),
    userAgent: userAgent(options.userAgent),
    headers: callerHeaders('headers', options.headers),
    hooks: { ...options.hooks },
    // Called as a plain function: some fetch implementations refuse another `this`.
    fetch: (input, init) => fetchFn(input, init),
    random: Math.random,
    onRetry: options.onRetry,
  });
  const url = (path: string, query: Record<string, string> = {}) => {
    const target = new URL(path, base);
    for (const [name, value] of Object.entries(query)) target.searchParams.set(name, value);
    return target;
  };
  const idPath = (collection: string, id: bigint, rest = '') => {
    assertInt64('id', id);
    return url(`${collection}/${id}${rest}`);
  };
  const perCall = (options: CallOptions = {}) => ({
    signal: options.signal,
    retries: options.retries === undefined ? undefined : count('retries', options.retries),
    timeoutMs: options.timeoutMs === undefined ? undefined : positive('timeoutMs', options.timeoutMs),
    headers: callerHeaders('options.headers', options.headers),
  });
  const post = (target: URL, body: unknown, options: CreateOptions = {}): Call => ({
    method: 'POST',
    url: target,
    body: writeJson(body),
    idempotencyKey: newIdempotencyKey(options.idempotencyKey),
    ...perCall(options),
  });
  const patch = (target: URL, body: unknown, options: ChangeOptions = {}): Call => ({
    method: 'PATCH',
    url: target,
    body: writeJson(body),
    contentType: 'application/merge-patch+json',
    idempotencyKey: newIdempotencyKey(options.idempotencyKey),
    ...perCall(options),
  });
  /** A POST without a body, its Idempotency-Key all the same. */
  const act = (target: URL, options: ChangeOptions = {}): Call => ({
    method: 'POST',
    url: target,
    idempotencyKey: newIdempotencyKey(options.idempotencyKey),
    ...perCall(options),
  });
  const remove = (target: URL, options: DeleteOptions = {}): Call => ({
    method: 'DELETE',
    url: target,
    idempotencyKey: newIdempotencyKey(options.idempotencyKey),
    ...perCall(options),
  });
  /**
   * One call, sent now. `request` runs inside it, so an argument it refuses rejects the call's
   * promise like any other failure. The body is read and checked against `expected`; a call
   * without one (a delete) has no data, and its success is the documented 204 alone.
   */
  function exchange<T>(request: () => Call, expected?: Expected<T>): ApiPromise<T> {
    return new CallPromise(
      (async () => {
        const answer = await transport.send(request());
        if (expected === undefined) assertNoContent(answer);
        const data = expected === undefined ? (undefined as T) : readChecked(answer, expected);
        return { data, response: apiResponse(answer) };
      })(),
    );
  }

  /** The pages of a list from `first`, each answer checked against `expected`, following `Link: rel=next`. */
  async function* pagesFrom<T>(first: URL, expected: Expected<T[]>, options: CallOptions): AsyncGenerator<Page<T>> {
    let page: URL | undefined = first;
    while (page !== undefined) {
      const answer: Answer = await transport.send({ method: 'GET', url: page, ...perCall(options) });
      yield { data: readChecked(answer, expected), response: apiResponse(answer) };
      page = followable(nextLink(answer.headers.get('link'), answer.url), answer, base);
    }
  }

  function limitQuery(limit: number | undefined): Record<string, string> {
    if (limit === undefined) return {};
    if (!Number.isInteger(limit) || limit < 1 || limit > INT32_MAX) {
      throw new RangeError(`limit must be an integer from 1 to ${INT32_MAX}`);
    }
    return { limit: String(limit) };
  }

  // Generators, so that an option they refuse rejects the first step, as every failure of a list does.
  async function* plantPages(options: ListOptions): AsyncGenerator<Page<Plant>> {
    const query = limitQuery(options.limit);
    if (options.after !== undefined) {
      assertInt64('after', options.after);
      query.after = String(options.after);
    }
    yield* pagesFrom(url('plants', query), ANSWERS.listPlants, options);
  }

  async function* eventPages(options: EventListOptions): AsyncGenerator<Page<Event>> {
    const query = limitQuery(options.limit);
    if (options.order !== undefined) query.order = options.order;
    if (options.type !== undefined) query.type = options.type;
    if (options.since !== undefined) query.since = dateTime('since', options.since);
    if (options.until !== undefined) query.until = dateTime('until', options.until);
    if (options.after !== undefined) query.after = options.after;
    yield* pagesFrom(url('events', query), ANSWERS.listEvents, options);
  }

  /** Iterated directly it yields items, once; `pages()` and `toArray()` each read the list anew. */
  function pagedList<T>(pages: () => AsyncGenerator<Page<T>>): PagedList<T> {
    async function* items(): AsyncGenerator<T> {
      for await (const page of pages()) yield* page.data;
    }
    return Object.assign(items(), {
      pages,
      async toArray({ max }: { max: number }): Promise<T[]> {
        if (max !== Infinity && (!Number.isInteger(max) || max < 1)) {
          throw new RangeError('max must be a positive integer, or Infinity');
        }
        const found: T[] = [];
        for await (const page of pages()) {
          found.push(...page.data.slice(0, max - found.length));
          // Leaving the loop fetches no further page.
          if (found.length >= max) break;
        }
        return found;
      },
    });
  }

  return {
    plants: {
      create: (plant, options) =>
        exchange(() => {
          assertInt64('plant.id', plant?.id);
          return post(url('plants'), plant, options);
        }, ANSWERS.createPlant),
      // Each iteration reads the list anew, with the options checked when it starts.
      list: (options = {}) => pagedList(() => plantPages(options)),
      delete: (id, options) => exchange<void>(() => remove(idPath('plants', id), options)),
    },
    webhooks: {
      create: (webhook, options) => exchange(() => post(url('webhooks'), webhook, options), ANSWERS.createWebhook),
      list: (options) =>
        exchange(() => ({ method: 'GET', url: url('webhooks'), ...perCall(options) }), ANSWERS.listWebhooks),
      delete: (id, options) => exchange<void>(() => remove(idPath('webhooks', id), options)),
      deliveries: (id, options) =>
        exchange(
          () => ({ method: 'GET', url: idPath('webhooks', id, '/deliveries'), ...perCall(options) }),
          ANSWERS.listWebhookDeliveries,
        ),
      update: (id, change, options) =>
        exchange(() => patch(idPath('webhooks', id), change, options), ANSWERS.updateWebhook),
      rotateSecret: (id, rotation, options) =>
        exchange(
          () => post(idPath('webhooks', id, '/rotate-secret'), rotation ?? {}, options),
          ANSWERS.rotateWebhookSecret,
        ),
      test: (id, options) => exchange(() => act(idPath('webhooks', id, '/test'), options), ANSWERS.testWebhook),
      resend: (id, eventId, options) =>
        exchange(() => {
          if (typeof eventId !== 'string' || !/^(evt|msg)_[1-9][0-9]{0,18}$/.test(eventId)) {
            throw new TypeError('eventId must be a webhook-id: evt_ or msg_ and its number');
          }
          return act(idPath('webhooks', id, `/deliveries/${eventId}/resend`), options);
        }, ANSWERS.resendWebhookDelivery),
      recover: (id, since, options) =>
        exchange(
          () => post(idPath('webhooks', id, '/recover'), { since: dateTime('since', since) }, options),
          ANSWERS.recoverWebhook,
        ),
    },
    events: {
      list: (options = {}) => pagedList(() => eventPages(options)),
    },
  };
}

/** A Date as the API's date-time (UTC, milliseconds). */
function dateTime(name: string, value: Date): string {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new TypeError(`${name} must be a valid Date`);
  return value.toISOString();
}

/**
 * The next page, if the service names one. It must be under `baseUrl`, origin and path prefix: the
 * token goes with it. A link back to the same page would loop for ever.
 */
function followable(next: URL | undefined, answer: Answer, base: URL): URL | undefined {
  if (next === undefined) return undefined;
  if (!isUnder(next, base)) {
    throw invalidResponse(answer, `the next page (${next.href}) is not under baseUrl (${base.href})`);
  }
  if (next.href === answer.url.href) throw invalidResponse(answer, 'the next page is the page itself');
  return next;
}

/**
 * A delete succeeds with 204 and no body. Another 2xx (a gateway's or a login page's `200`) is not
 * the service's answer and says nothing of whether anything was deleted. The 404 of a retried
 * delete whose first answer was lost is not a 2xx, and stays a success (see Transport.send).
 */
function assertNoContent(answer: Answer): void {
  if (answer.status >= 200 && answer.status < 300 && answer.status !== 204) {
    throw invalidResponse(answer, `the status is ${answer.status}, not 204 No Content`);
  }
}

function userAgent(given: string | undefined): string {
  if (given === undefined) return PRODUCT;
  if (given.trim() === '') throw new TypeError('userAgent must not be blank');
  const value = `${given.trim()} ${PRODUCT}`;
  try {
    new Headers({ 'User-Agent': value });
  } catch {
    throw new TypeError('userAgent must be a valid header value (no line breaks)');
  }
  return value;
}

/** Headers the caller gives, as lower-case names; refused if invalid or one the client sets itself. */
function callerHeaders(name: string, given: Record<string, string> | undefined): Record<string, string> {
  if (given === undefined) return {};
  let headers: Headers;
  try {
    headers = new Headers(given);
  } catch (error) {
    throw new TypeError(`${name}: ${(error as Error).message}`, { cause: error });
  }
  for (const header of headers.keys()) {
    const owner = OWN_HEADERS[header];
    if (owner !== undefined) throw new TypeError(`${name} must not set ${header}: ${owner} sets it`);
  }
  return Object.fromEntries(headers);
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
}

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
  return value;
}
