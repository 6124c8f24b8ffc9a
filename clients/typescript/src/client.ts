import { PlantStoreError } from './errors';
import { Answer, RetryEvent, Transport, newIdempotencyKey, readJson } from './http';
import { assertInt64, writeJson } from './json';
import { isUnder, nextLink } from './link';
import type { CreatedWebhook, NewPlant, NewWebhook, Plant, Webhook, WebhookAttempt } from './types';

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
}

export interface CallOptions {
  signal?: AbortSignal;
  /** This call's own `retries`, instead of the client's. */
  retries?: number;
}

export interface CreateOptions extends CallOptions {
  /**
   * Sent as `Idempotency-Key` on every attempt of this call, so a retry cannot create twice. The
   * client makes a random one when none is given; give your own to make a create idempotent
   * across calls (a restarted job creating the same thing again).
   */
  idempotencyKey?: string;
}

export interface ListOptions extends CallOptions {
  /** Plants per page (1 to 2147483647); the service caps it (PLANTS_MAX_PAGE, 1000 by default). */
  limit?: number;
  /** Start after this id: plants come in ascending id order. */
  after?: bigint;
}

export interface PlantStoreClient {
  plants: {
    create(plant: NewPlant, options?: CreateOptions): Promise<Plant>;
    /** Every plant of the token's user, in id order, fetched a page at a time as the loop asks for more. */
    list(options?: ListOptions): AsyncIterableIterator<Plant>;
    delete(id: bigint, options?: CallOptions): Promise<void>;
  };
  webhooks: {
    create(webhook: NewWebhook, options?: CreateOptions): Promise<CreatedWebhook>;
    list(options?: CallOptions): Promise<Webhook[]>;
    delete(id: bigint, options?: CallOptions): Promise<void>;
    /** The subscription's last delivery attempts (up to 100, of the last 7 days). */
    deliveries(id: bigint, options?: CallOptions): Promise<WebhookAttempt[]>;
  };
}

const INT32_MAX = 2 ** 31 - 1;

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
    token: options.token,
    timeoutMs: positive('timeoutMs', options.timeoutMs ?? 10_000),
    retries: count('retries', options.retries ?? 2),
    backoffBaseMs: count('backoffBaseMs', options.backoffBaseMs ?? 250),
    backoffMaxMs: count('backoffMaxMs', options.backoffMaxMs ?? 5_000),
    maxRetryAfterMs: count('maxRetryAfterMs', options.maxRetryAfterMs ?? 30_000),
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
  });
  const get = async (target: URL, options?: CallOptions) =>
    readJson(await transport.send({ method: 'GET', url: target, ...perCall(options) }));
  const remove = async (target: URL, options?: CallOptions) => {
    await transport.send({ method: 'DELETE', url: target, ...perCall(options) });
  };
  const create = async (target: URL, body: unknown, options: CreateOptions = {}) =>
    readJson(
      await transport.send({
        method: 'POST',
        url: target,
        body: writeJson(body),
        idempotencyKey: newIdempotencyKey(options.idempotencyKey),
        ...perCall(options),
      }),
    );

  async function* listPlants(options: ListOptions = {}): AsyncIterableIterator<Plant> {
    const query: Record<string, string> = {};
    if (options.limit !== undefined) {
      if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > INT32_MAX) {
        throw new RangeError(`limit must be an integer from 1 to ${INT32_MAX}`);
      }
      query.limit = String(options.limit);
    }
    if (options.after !== undefined) {
      assertInt64('after', options.after);
      query.after = String(options.after);
    }
    let page: URL | undefined = url('plants', query);
    while (page !== undefined) {
      const answer: Answer = await transport.send({ method: 'GET', url: page, ...perCall(options) });
      yield* arrayOf<Plant>(readJson(answer), answer);
      page = followable(nextLink(answer.headers.get('link'), answer.url), answer, base);
    }
  }

  return {
    plants: {
      create: async (plant, options) => {
        assertInt64('plant.id', plant?.id);
        return (await create(url('plants'), plant, options)) as Plant;
      },
      list: listPlants,
      delete: async (id, options) => remove(idPath('plants', id), options),
    },
    webhooks: {
      create: async (webhook, options) => (await create(url('webhooks'), webhook, options)) as CreatedWebhook,
      list: async (options) => (await get(url('webhooks'), options)) as Webhook[],
      delete: async (id, options) => remove(idPath('webhooks', id), options),
      deliveries: async (id, options) =>
        (await get(idPath('webhooks', id, '/deliveries'), options)) as WebhookAttempt[],
    },
  };
}

function arrayOf<T>(value: unknown, answer: Answer): T[] {
  if (Array.isArray(value)) return value as T[];
  throw invalid(answer, 'a page of plants is not a JSON array');
}

/**
 * The next page, if the service names one. It must be under `baseUrl`, origin and path prefix: the
 * token goes with it. A link back to the same page would loop for ever.
 */
function followable(next: URL | undefined, answer: Answer, base: URL): URL | undefined {
  if (next === undefined) return undefined;
  if (!isUnder(next, base)) throw invalid(answer, `the next page (${next.href}) is not under baseUrl (${base.href})`);
  if (next.href === answer.url.href) throw invalid(answer, 'the next page is the page itself');
  return next;
}

function invalid(answer: Answer, message: string): PlantStoreError {
  return new PlantStoreError({
    kind: 'invalid-response',
    status: answer.status,
    message: `The answer to ${answer.url.pathname} is not what the API documents: ${message}`,
    attempts: answer.attempts,
    requestId: answer.headers.get('x-request-id') ?? undefined,
  });
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number`);
  return value;
}

function count(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
  return value;
}
