import { inspect } from 'node:util';
import { plantOf, plantText, plantsText } from './answers.fixtures';
import { createClient, type ClientOptions } from './client';
import { PlantStoreError } from './errors';
import type { RequestEvent, ResponseEvent, RetryEvent } from './http';
import { VERSION } from './version';

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

type Responder = (sent: Sent, signal: AbortSignal) => Response | Promise<Response>;

/** A fetch that answers from a script, one responder per request, and keeps what it was sent. */
function fakeFetch(...responders: Responder[]) {
  const sent: Sent[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
    const request: Sent = {
      method: init.method ?? 'GET',
      url: String(input),
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: init.body as string | undefined,
    };
    sent.push(request);
    const responder = responders[sent.length - 1];
    if (!responder) throw new Error(`unexpected request ${sent.length}: ${request.method} ${request.url}`);
    return responder(request, init.signal as AbortSignal);
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

const json =
  (status: number, body: string, headers: Record<string, string> = {}) =>
  () =>
    new Response(body, { status, headers: { 'Content-Type': 'application/json', ...headers } });
const error = (status: number, message: string, headers: Record<string, string> = {}) =>
  json(status, JSON.stringify({ error: status, message }), headers);
const noContent = () => () => new Response(null, { status: 204 });
const networkFailure = (code: string) => () => {
  throw new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
};
/** Never answers; rejects like fetch once the attempt's signal aborts. */
const hang = (): Responder => (_sent, signal) =>
  new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));

const MONSTERA = { id: 9223372036854775807n, name: 'Monstera', tag: 'tropical' };
const PLANT = plantText(MONSTERA);

function client(fetch: typeof globalThis.fetch, options: Partial<ClientOptions> = {}) {
  const retries: RetryEvent[] = [];
  const api = createClient({
    baseUrl: 'http://plants.test',
    token: 'pst_token',
    fetch,
    backoffBaseMs: 1,
    backoffMaxMs: 4,
    onRetry: (event) => retries.push(event),
    ...options,
  });
  return { api, retries };
}

async function caught(promise: Promise<unknown>): Promise<PlantStoreError> {
  const failure = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(PlantStoreError);
  return failure as PlantStoreError;
}

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

describe('createClient', () => {
  afterEach(() => jest.useRealTimers());

  describe('requests', () => {
    it('creates a plant with its id written and read exactly, the token and an Idempotency-Key', async () => {
      const { fetch, sent } = fakeFetch(json(200, PLANT));
      const plant = await client(fetch).api.plants.create({
        id: 9223372036854775807n,
        name: 'Monstera',
        tag: 'tropical',
      });
      expect(plant).toEqual(plantOf(MONSTERA));
      expect(sent).toEqual([
        {
          method: 'POST',
          url: 'http://plants.test/plants',
          headers: expect.objectContaining({
            authorization: 'Bearer pst_token',
            'content-type': 'application/json',
            'idempotency-key': expect.stringMatching(/^[0-9a-f-]{36}$/),
          }),
          body: '{"id":9223372036854775807,"name":"Monstera","tag":"tropical"}',
        },
      ]);
    });

    it('keeps a path prefix of baseUrl and asks a token function before every attempt', async () => {
      const { fetch, sent } = fakeFetch(error(503, 'down'), noContent());
      let n = 0;
      const { api } = client(fetch, { baseUrl: 'https://gw.test/store', token: async () => `pst_${++n}` });
      await api.plants.delete(-9223372036854775808n);
      expect(sent.map((s) => [s.method, s.url, s.headers.authorization])).toEqual([
        ['DELETE', 'https://gw.test/store/plants/-9223372036854775808', 'Bearer pst_1'],
        ['DELETE', 'https://gw.test/store/plants/-9223372036854775808', 'Bearer pst_2'],
      ]);
    });

    it('manages webhooks, their ids exact', async () => {
      const created =
        '{"id":4817263512000000001,"url":"https://h.test/","events":["plant.created"],"createdAt":"2026-11-24T09:30:00.000Z","enabled":true,"secret":"whsec_x"}';
      const { fetch, sent } = fakeFetch(
        json(201, created),
        json(200, `[${created.replace(',"secret":"whsec_x"', '')}]`),
        json(
          200,
          '[{"eventId":"msg_1","type":"plant.created","attempt":2,"statusCode":500,"attemptedAt":"2026-11-24T09:30:01.250Z","durationMs":84}]',
        ),
        noContent(),
      );
      const { api } = client(fetch);
      const webhook = await api.webhooks.create(
        { url: 'https://h.test/', events: ['plant.created'] },
        { idempotencyKey: 'job-7' },
      );
      expect(webhook).toMatchObject({ id: 4817263512000000001n, secret: 'whsec_x' });
      await expect(api.webhooks.list()).resolves.toEqual([expect.objectContaining({ id: 4817263512000000001n })]);
      await expect(api.webhooks.deliveries(webhook.id)).resolves.toEqual([
        expect.objectContaining({ attempt: 2, statusCode: 500, durationMs: 84 }),
      ]);
      await api.webhooks.delete(webhook.id);
      expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
        'POST http://plants.test/webhooks',
        'GET http://plants.test/webhooks',
        'GET http://plants.test/webhooks/4817263512000000001/deliveries',
        'DELETE http://plants.test/webhooks/4817263512000000001',
      ]);
      expect(sent[0].headers['idempotency-key']).toBe('job-7');
      expect(sent[0].body).toBe('{"url":"https://h.test/","events":["plant.created"]}');
    });

    it('changes, rotates, tests, resends and recovers a subscription, each with an Idempotency-Key', async () => {
      const webhook =
        '{"id":42,"url":"https://h.test/2","events":["plant.deleted"],"createdAt":"2026-11-24T09:30:00.000Z","enabled":true}';
      const { fetch, sent } = fakeFetch(
        json(200, webhook),
        json(200, webhook.replace('}', ',"previousSecretExpiresAt":"2026-11-25T09:30:00.000Z","secret":"whsec_new"}')),
        json(
          200,
          '{"eventId":"test_ab","delivered":false,"error":"connection refused","attemptedAt":"2026-11-24T09:30:00.000Z","durationMs":3}',
        ),
        json(202, '{"eventId":"evt_1842","type":"plant.created"}'),
        json(202, '{"since":"2026-11-24T09:00:00.000Z"}'),
      );
      const { api } = client(fetch);
      await expect(api.webhooks.update(42n, { url: 'https://h.test/2', description: null })).resolves.toMatchObject({
        id: 42n,
        url: 'https://h.test/2',
      });
      await expect(api.webhooks.rotateSecret(42n, { gracePeriodSeconds: 3600 })).resolves.toMatchObject({
        secret: 'whsec_new',
        previousSecretExpiresAt: '2026-11-25T09:30:00.000Z',
      });
      await expect(api.webhooks.test(42n)).resolves.toMatchObject({ delivered: false, error: 'connection refused' });
      await expect(api.webhooks.resend(42n, 'evt_1842')).resolves.toEqual({
        eventId: 'evt_1842',
        type: 'plant.created',
      });
      await expect(api.webhooks.recover(42n, new Date('2026-11-24T09:00:00Z'))).resolves.toEqual({
        since: '2026-11-24T09:00:00.000Z',
      });
      expect(sent.map((s) => [s.method, s.url, s.headers['content-type'], s.body])).toEqual([
        [
          'PATCH',
          'http://plants.test/webhooks/42',
          'application/merge-patch+json',
          '{"url":"https://h.test/2","description":null}',
        ],
        ['POST', 'http://plants.test/webhooks/42/rotate-secret', 'application/json', '{"gracePeriodSeconds":3600}'],
        ['POST', 'http://plants.test/webhooks/42/test', undefined, undefined],
        ['POST', 'http://plants.test/webhooks/42/deliveries/evt_1842/resend', undefined, undefined],
        ['POST', 'http://plants.test/webhooks/42/recover', 'application/json', '{"since":"2026-11-24T09:00:00.000Z"}'],
      ]);
      expect(sent.every((s) => /^[0-9a-f-]{36}$/.test(s.headers['idempotency-key']))).toBe(true);
    });

    it('retries a change with its key, and refuses an eventId or a date that cannot be sent', async () => {
      const { fetch, sent } = fakeFetch(
        error(503, 'down'),
        json(200, '{"id":42,"url":"u","events":[],"createdAt":"x","enabled":false}'),
      );
      const { api } = client(fetch);
      await api.webhooks.update(42n, { enabled: false });
      expect(sent).toHaveLength(2);
      expect(sent[0].headers['idempotency-key']).toBe(sent[1].headers['idempotency-key']);
      await expect(api.webhooks.resend(42n, '../plants')).rejects.toThrow(TypeError);
      await expect(api.webhooks.recover(42n, new Date('nope'))).rejects.toThrow(TypeError);
      expect(sent).toHaveLength(2);
    });

    it('lists events page by page with its filters, data ids exact', async () => {
      const event = (id: number) =>
        `{"id":"evt_${id}","type":"plant.deleted","timestamp":"2026-11-24T09:30:00.000Z","data":{"id":9223372036854775807}}`;
      const { fetch, sent } = fakeFetch(
        json(200, `[${event(3)},${event(2)}]`, {
          Link: '<?limit=2&order=desc&type=plant.deleted&after=evt_2>; rel="next"',
        }),
        json(200, `[${event(1)}]`),
      );
      const { api } = client(fetch);
      const events = await collect(
        api.events.list({ limit: 2, type: 'plant.deleted', since: new Date('2026-11-24T00:00:00Z') }),
      );
      expect(events.map((e) => e.id)).toEqual(['evt_3', 'evt_2', 'evt_1']);
      expect(events[0].data).toEqual({ id: 9223372036854775807n });
      expect(sent.map((s) => s.url)).toEqual([
        'http://plants.test/events?limit=2&type=plant.deleted&since=2026-11-24T00%3A00%3A00.000Z',
        'http://plants.test/events?limit=2&order=desc&type=plant.deleted&after=evt_2',
      ]);
    });

    it('refuses ids that are not int64 bigints, a bad limit and a bad key, before sending anything', async () => {
      const { fetch, sent } = fakeFetch();
      const { api } = client(fetch);
      await expect(api.plants.create({ id: 7 as unknown as bigint, name: 'x' })).rejects.toThrow(TypeError);
      await expect(api.plants.delete(2n ** 63n)).rejects.toThrow(RangeError);
      await expect(api.plants.create({ id: 7n, name: 'x' }, { idempotencyKey: 'has space' })).rejects.toThrow(
        TypeError,
      );
      await expect(collect(api.plants.list({ limit: 0 }))).rejects.toThrow(RangeError);
      expect(sent).toEqual([]);
    });
  });

  describe('list', () => {
    it('follows Link rel="next" page by page, ids exact', async () => {
      const { fetch, sent } = fakeFetch(
        json(200, plantsText({ id: 9007199254740993n, name: 'a' }, { id: 9007199254740995n, name: 'b' }), {
          Link: '</plants?limit=2&after=9007199254740995>; rel="next"',
        }),
        json(200, plantsText({ id: 9223372036854775807n, name: 'c' })),
      );
      const plants = await collect(client(fetch).api.plants.list({ limit: 2 }));
      expect(plants.map((p) => p.id)).toEqual([9007199254740993n, 9007199254740995n, 9223372036854775807n]);
      expect(sent.map((s) => s.url)).toEqual([
        'http://plants.test/plants?limit=2',
        'http://plants.test/plants?limit=2&after=9007199254740995',
      ]);
    });

    it('fetches a page only when the loop asks for it, and starts after a given id', async () => {
      const { fetch, sent } = fakeFetch(
        json(200, plantsText({ id: 5n, name: 'a' }), { Link: '</plants?after=5>; rel="next"' }),
      );
      const iterator = client(fetch).api.plants.list({ after: -1n });
      expect(sent).toHaveLength(0);
      await expect(iterator.next()).resolves.toEqual({ done: false, value: plantOf({ id: 5n, name: 'a' }) });
      await iterator.return?.(undefined);
      expect(sent.map((s) => s.url)).toEqual(['http://plants.test/plants?after=-1']);
    });

    it('never sends the token to another origin a Link names', async () => {
      const { fetch, sent } = fakeFetch(
        json(200, '[]', { Link: '<https://elsewhere.test/plants?after=1>; rel="next"' }),
      );
      const failure = await caught(collect(client(fetch).api.plants.list()));
      expect(failure).toMatchObject({ kind: 'invalid-response', status: 200 });
      expect(sent).toHaveLength(1);
    });

    it.each(['plants?limit=1&after=5', './plants?limit=1&after=5'])(
      'follows a relative <%s> under a path-prefix baseUrl',
      async (target) => {
        const { fetch, sent } = fakeFetch(
          json(200, plantsText({ id: 5n, name: 'a' }), { Link: `<${target}>; rel="next"` }),
          json(200, plantsText({ id: 6n, name: 'b' })),
        );
        const { api } = client(fetch, { baseUrl: 'http://gw.test/plant-store' });
        await expect(collect(api.plants.list({ limit: 1 }))).resolves.toEqual([
          plantOf({ id: 5n, name: 'a' }),
          plantOf({ id: 6n, name: 'b' }),
        ]);
        expect(sent.map((s) => s.url)).toEqual([
          'http://gw.test/plant-store/plants?limit=1',
          'http://gw.test/plant-store/plants?limit=1&after=5',
        ]);
      },
    );

    it.each(['/plants?limit=1&after=5', '../admin/plants?after=5', 'http://gw.test/plants?after=5'])(
      'refuses <%s>, outside a path-prefix baseUrl, without sending the token there',
      async (target) => {
        const { fetch, sent } = fakeFetch(
          json(200, plantsText({ id: 5n, name: 'a' }), { Link: `<${target}>; rel="next"` }),
        );
        const { api } = client(fetch, { baseUrl: 'http://gw.test/plant-store/' });
        const failure = await caught(collect(api.plants.list({ limit: 1 })));
        expect(failure).toMatchObject({ kind: 'invalid-response', status: 200, attempts: 1 });
        expect(failure.message).toContain('not under baseUrl (http://gw.test/plant-store/)');
        expect(sent).toHaveLength(1);
      },
    );

    it('reports a page that is not a JSON array', async () => {
      const { fetch } = fakeFetch(json(200, '{"id":1}'));
      await expect(collect(client(fetch).api.plants.list())).rejects.toMatchObject({ kind: 'invalid-response' });
    });
  });

  describe('errors', () => {
    it('throws the service message and status of a 4xx at once, with the request id', async () => {
      const { fetch, sent } = fakeFetch(error(409, 'A plant with id 7 already exists', { 'X-Request-Id': 'req-1' }));
      const failure = await caught(client(fetch).api.plants.create({ id: 7n, name: 'x' }));
      expect(failure).toMatchObject({
        kind: 'http',
        status: 409,
        message: 'A plant with id 7 already exists',
        requestId: 'req-1',
        attempts: 1,
      });
      expect(failure.isClientError).toBe(true);
      expect(failure.isServerError).toBe(false);
      expect(sent).toHaveLength(1);
    });

    it("does not retry a 500, and says so when the body is not the service's", async () => {
      const { fetch, sent } = fakeFetch(() => new Response('<html>oops</html>', { status: 500 }));
      const failure = await caught(client(fetch).api.webhooks.list());
      expect(failure).toMatchObject({ kind: 'http', status: 500, message: '/webhooks answered 500' });
      expect(failure.isServerError).toBe(true);
      expect(sent).toHaveLength(1);
    });

    it('reports a redirect rather than following it with the token', async () => {
      const { fetch } = fakeFetch(() => new Response(null, { status: 301, headers: { Location: 'https://x.test/' } }));
      await expect(client(fetch).api.webhooks.list()).rejects.toMatchObject({ kind: 'http', status: 301 });
    });

    it('reports a success whose body is not JSON', async () => {
      const { fetch } = fakeFetch(json(200, 'not json'));
      await expect(client(fetch).api.webhooks.list()).rejects.toMatchObject({ kind: 'invalid-response', status: 200 });
    });
  });

  describe('retries', () => {
    it('retries a 503 and a network failure with growing, jittered backoff, then succeeds', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.5);
      const { fetch, sent } = fakeFetch(error(503, 'down'), networkFailure('ECONNRESET'), json(200, '[]'));
      const { api, retries } = client(fetch, { backoffBaseMs: 10, backoffMaxMs: 1000 });
      await expect(api.webhooks.list()).resolves.toEqual([]);
      expect(retries.map((r) => [r.attempt, r.delayMs, r.error.kind, r.error.status])).toEqual([
        [1, 8, 'http', 503],
        [2, 15, 'network', 0],
      ]);
      expect(sent).toHaveLength(3);
    });

    it('gives up after `retries` retries with the last failure and the number of attempts', async () => {
      const { fetch, sent } = fakeFetch(error(503, 'a'), error(503, 'b'), error(503, 'c'));
      const failure = await caught(client(fetch, { retries: 2 }).api.webhooks.list());
      expect(failure).toMatchObject({ status: 503, message: 'c', attempts: 3 });
      expect(sent).toHaveLength(3);
    });

    it('wraps a network failure that outlasts the retries', async () => {
      const { fetch } = fakeFetch(networkFailure('ECONNREFUSED'), networkFailure('ECONNREFUSED'));
      const failure = await caught(client(fetch, { retries: 1 }).api.webhooks.list());
      expect(failure).toMatchObject({ kind: 'network', status: 0, attempts: 2 });
      expect(failure.message).toContain('ECONNREFUSED');
      expect(failure.cause).toBeInstanceOf(TypeError);
    });

    it('waits what a 429 Retry-After says, in seconds or as an HTTP date', async () => {
      jest.useFakeTimers({ now: Date.parse('2026-11-24T10:00:00Z') });
      const { fetch, sent } = fakeFetch(
        error(429, 'slow down', { 'Retry-After': '2' }),
        error(429, 'slow down', { 'Retry-After': 'Tue, 24 Nov 2026 10:00:05 GMT' }),
        json(200, '[]'),
      );
      const { api, retries } = client(fetch);
      const listed = api.webhooks.list();
      await jest.advanceTimersByTimeAsync(1999);
      expect(sent).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(sent).toHaveLength(2);
      await jest.advanceTimersByTimeAsync(3000);
      await expect(listed).resolves.toEqual([]);
      expect(retries.map((r) => r.delayMs)).toEqual([2000, 3000]);
    });

    it('fails at once when Retry-After asks for more than maxRetryAfterMs, telling how long', async () => {
      const { fetch, sent } = fakeFetch(error(429, 'slow down', { 'Retry-After': '120' }));
      const failure = await caught(client(fetch, { maxRetryAfterMs: 60_000 }).api.webhooks.list());
      expect(failure).toMatchObject({ status: 429, retryAfterMs: 120_000, attempts: 1 });
      expect(sent).toHaveLength(1);
    });

    it('times an attempt out, retries it, and reports a timeout when none answers', async () => {
      const { fetch, sent } = fakeFetch(hang(), hang());
      const failure = await caught(client(fetch, { timeoutMs: 20, retries: 1 }).api.webhooks.list());
      expect(failure).toMatchObject({ kind: 'timeout', status: 0, attempts: 2 });
      expect(failure.message).toContain('20 ms');
      expect(sent).toHaveLength(2);
    });

    it('times out even a fetch that ignores its signal', async () => {
      const { fetch } = fakeFetch(() => new Promise<Response>(() => undefined));
      await expect(client(fetch, { timeoutMs: 20, retries: 0 }).api.webhooks.list()).rejects.toMatchObject({
        kind: 'timeout',
      });
    });

    it('counts reading the body in the timeout', async () => {
      const stalled = (_sent: Sent, signal: AbortSignal) =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('['));
              signal.addEventListener('abort', () => controller.error(signal.reason));
            },
          }),
          { status: 200 },
        );
      const { fetch } = fakeFetch(stalled, json(200, '[]'));
      const { api, retries } = client(fetch, { timeoutMs: 20 });
      await expect(api.webhooks.list()).resolves.toEqual([]);
      expect(retries.map((r) => r.error.kind)).toEqual(['timeout']);
    });

    it('sends one Idempotency-Key on every attempt of a create, a new one per call', async () => {
      const { fetch, sent } = fakeFetch(
        networkFailure('ECONNRESET'),
        error(503, 'down'),
        json(200, PLANT),
        json(200, PLANT),
      );
      const { api } = client(fetch);
      await api.plants.create({ id: 9223372036854775807n, name: 'Monstera' });
      await api.plants.create({ id: 9223372036854775807n, name: 'Monstera' });
      const keys = sent.map((s) => s.headers['idempotency-key']);
      expect(new Set(keys.slice(0, 3)).size).toBe(1);
      expect(keys[3]).not.toBe(keys[0]);
    });

    it("retries a create with the caller's own key", async () => {
      const { fetch, sent } = fakeFetch(hang(), json(200, PLANT));
      await client(fetch, { timeoutMs: 20 }).api.plants.create({ id: 1n, name: 'x' }, { idempotencyKey: 'import-42' });
      expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['import-42', 'import-42']);
    });

    it("sends one Idempotency-Key on every attempt of a delete, a new one per call, or the caller's own", async () => {
      const { fetch, sent } = fakeFetch(networkFailure('ECONNRESET'), noContent(), noContent(), noContent());
      const { api } = client(fetch);
      await api.plants.delete(7n);
      await api.webhooks.delete(8n);
      await api.plants.delete(9n, { idempotencyKey: 'cleanup-9' });
      const keys = sent.map((s) => s.headers['idempotency-key']);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(keys[2]).not.toBe(keys[0]);
      expect(keys[3]).toBe('cleanup-9');
    });

    it('takes a 404 to a retried delete whose first answer was lost as done', async () => {
      const { fetch, sent } = fakeFetch(hang(), error(404, 'Plant 7 not found'));
      await expect(client(fetch, { timeoutMs: 20 }).api.plants.delete(7n)).resolves.toBeUndefined();
      expect(sent).toHaveLength(2);
    });

    it('reports a 404 when no earlier attempt of the delete can have reached the service', async () => {
      const first = fakeFetch(error(404, 'Plant 7 not found'));
      await expect(client(first.fetch).api.plants.delete(7n)).rejects.toMatchObject({ status: 404, attempts: 1 });
      const afterLimit = fakeFetch(error(429, 'slow', { 'Retry-After': '0' }), error(404, 'Plant 7 not found'));
      await expect(client(afterLimit.fetch).api.plants.delete(7n)).rejects.toMatchObject({ status: 404, attempts: 2 });
      const refused = fakeFetch(networkFailure('ECONNREFUSED'), error(404, 'Plant 7 not found'));
      await expect(client(refused.fetch).api.plants.delete(7n)).rejects.toMatchObject({ status: 404, attempts: 2 });
    });

    it('stops at once when the caller aborts, during an attempt or a wait', async () => {
      const during = new AbortController();
      const { fetch } = fakeFetch(hang());
      const call = client(fetch).api.webhooks.list({ signal: during.signal });
      during.abort();
      await expect(call).rejects.toMatchObject({ kind: 'aborted', attempts: 1 });

      const waiting = new AbortController();
      const second = fakeFetch(error(503, 'down', { 'Retry-After': '10' }));
      const { api } = client(second.fetch, {
        onRetry: () => waiting.abort(),
      });
      await expect(api.webhooks.list({ signal: waiting.signal })).rejects.toMatchObject({ kind: 'aborted' });
      expect(second.sent).toHaveLength(1);
    });

    it('retries nothing with retries: 0, for the client or for one call', async () => {
      const { fetch, sent } = fakeFetch(error(503, 'down'), error(503, 'down'), error(503, 'down'), json(200, '[]'));
      await expect(client(fetch, { retries: 0 }).api.webhooks.list()).rejects.toMatchObject({ status: 503 });
      expect(sent).toHaveLength(1);
      const { api } = client(fetch);
      await expect(api.plants.create({ id: 1n, name: 'x' }, { retries: 0 })).rejects.toMatchObject({ attempts: 1 });
      await expect(api.webhooks.list({ retries: 1 })).resolves.toEqual([]);
      expect(sent).toHaveLength(4);
    });

    it("tells the key of a failed create, the caller's or its own, and no key for other calls", async () => {
      const { fetch, sent } = fakeFetch(error(409, 'in flight'), error(500, 'x'), error(500, 'y'));
      const { api } = client(fetch);
      const own = await caught(api.plants.create({ id: 1n, name: 'x' }));
      expect(own.idempotencyKey).toBe(sent[0].headers['idempotency-key']);
      const given = await caught(
        api.webhooks.create({ url: 'https://h.test/', events: ['plant.created'] }, { idempotencyKey: 'k-1' }),
      );
      expect(given.idempotencyKey).toBe('k-1');
      expect((await caught(api.webhooks.list())).idempotencyKey).toBeUndefined();
    });
  });

  describe('answers', () => {
    it('refuses a create answered 200 [] instead of the plant, telling the key to send it again with', async () => {
      const { fetch, sent } = fakeFetch(json(200, '[]', { 'X-Request-Id': 'req-2' }));
      const failure = await caught(client(fetch).api.plants.create({ id: 7n, name: 'Fern' }));
      expect(failure).toMatchObject({
        kind: 'invalid-response',
        status: 200,
        attempts: 1,
        requestId: 'req-2',
        idempotencyKey: sent[0].headers['idempotency-key'],
        message: 'The answer to /plants is not what the API documents: the body is not a JSON object',
      });
    });

    it.each([
      ['webhooks.list', '{}', 'the body is not a JSON array'],
      ['webhooks.deliveries', '[{"eventId":"msg_1"}]', 'item 0 has no type'],
      ['webhooks.create', '{"id":1,"url":"https://h.test/","events":[],"createdAt":"x","enabled":true}', 'no secret'],
      ['plants.list', plantsText({ id: 1n, name: null }), 'name of item 0 is not a string'],
    ])('refuses %s answered %s', async (call, body, problem) => {
      const { fetch } = fakeFetch(json(200, body));
      const { api } = client(fetch);
      const calls: Record<string, () => Promise<unknown>> = {
        'webhooks.list': () => api.webhooks.list(),
        'webhooks.deliveries': () => api.webhooks.deliveries(1n),
        'webhooks.create': () => api.webhooks.create({ url: 'https://h.test/', events: ['plant.created'] }),
        'plants.list': () => collect(api.plants.list()),
      };
      const failure = await caught(calls[call]());
      expect(failure.kind).toBe('invalid-response');
      expect(failure.message).toContain(problem);
    });

    it.each([
      ['plants.delete', 200, '<html>Signed in</html>', '/plants/7'],
      ['webhooks.delete', 202, '', '/webhooks/7'],
    ])('refuses %s answered %d instead of 204: nothing says it was deleted', async (call, status, body, path) => {
      const { fetch, sent } = fakeFetch(() => new Response(body, { status, headers: { 'X-Request-Id': 'req-4' } }));
      const { api } = client(fetch);
      const failure = await caught(call === 'plants.delete' ? api.plants.delete(7n) : api.webhooks.delete(7n));
      expect(failure).toMatchObject({
        kind: 'invalid-response',
        status,
        attempts: 1,
        requestId: 'req-4',
        message: `The answer to ${path} is not what the API documents: the status is ${status}, not 204 No Content`,
      });
      expect(sent).toHaveLength(1);
    });
  });

  describe('withResponse', () => {
    it("gives a create's data with its answer's metadata, the request sent once", async () => {
      const { fetch, sent } = fakeFetch(
        error(503, 'down', { 'Retry-After': '0' }),
        json(200, PLANT, {
          'X-Request-Id': 'req-3',
          'Idempotent-Replayed': 'true',
          RateLimit: '"default";r=598;t=42',
          'RateLimit-Policy': '"default";q=600;w=60',
        }),
      );
      const call = client(fetch).api.plants.create({ id: 9223372036854775807n, name: 'Monstera' });
      const { data, response } = await call.withResponse();
      await expect(call).resolves.toBe(data);
      expect(data).toEqual(plantOf(MONSTERA));
      expect(response).toEqual({
        status: 200,
        headers: expect.any(Headers),
        url: 'http://plants.test/plants',
        requestId: 'req-3',
        replayed: true,
        rateLimit: { remaining: 598, resetSeconds: 42, limit: 600, windowSeconds: 60 },
        attempts: 2,
        idempotencyKey: sent[0].headers['idempotency-key'],
      });
      expect(response.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
      expect(sent).toHaveLength(2);
    });

    it('tells a first answer from a replay, and a delete done by an earlier attempt by its 404', async () => {
      const { fetch } = fakeFetch(json(200, '[]'), noContent(), hang(), error(404, 'Plant 7 not found'));
      const { api } = client(fetch, { timeoutMs: 20 });
      await expect(api.webhooks.list().withResponse()).resolves.toEqual({
        data: [],
        response: expect.objectContaining({ status: 200, replayed: false, attempts: 1 }),
      });
      const { response } = await api.plants.delete(7n).withResponse();
      expect(response).toMatchObject({ status: 204, attempts: 1 });
      expect(response).not.toHaveProperty('requestId');
      await expect(api.plants.delete(7n).withResponse()).resolves.toEqual({
        data: undefined,
        response: expect.objectContaining({ status: 404, attempts: 2 }),
      });
    });

    it('rejects withResponse() with the typed error, leaving no other promise to reject unhandled', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const { fetch } = fakeFetch(error(409, 'taken'));
        const call = client(fetch).api.plants.create({ id: 7n, name: 'x' });
        await expect(call.withResponse()).rejects.toMatchObject({ kind: 'http', status: 409 });
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(unhandled).toEqual([]);
        // The promise itself still rejects for a caller that awaits it, and is a Promise.
        await expect(call).rejects.toMatchObject({ status: 409 });
        expect(call).toBeInstanceOf(Promise);
        await expect(call.catch((e: PlantStoreError) => e.status)).resolves.toBe(409);
        await expect(call.finally(() => undefined)).rejects.toMatchObject({ status: 409 });
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  });

  describe('list pages and toArray', () => {
    const pageOf = (ids: number[], after?: number) =>
      json(
        200,
        plantsText(...ids.map((id) => ({ id: BigInt(id), name: `p${id}` }))),
        after === undefined
          ? {}
          : { Link: `<plants?limit=2&after=${after}>; rel="next"`, 'X-Request-Id': `page-${after}` },
      );

    it('yields whole pages with their metadata', async () => {
      const { fetch, sent } = fakeFetch(pageOf([1, 2], 2), pageOf([3]));
      const pages = await collect(client(fetch).api.plants.list({ limit: 2 }).pages());
      expect(pages.map((page) => [page.data.map((p) => p.id), page.response.url, page.response.requestId])).toEqual([
        [[1n, 2n], 'http://plants.test/plants?limit=2', 'page-2'],
        [[3n], 'http://plants.test/plants?limit=2&after=2', undefined],
      ]);
      expect(sent).toHaveLength(2);
    });

    it('collects up to max plants, fetching no page beyond them', async () => {
      const twoPages = fakeFetch(pageOf([1, 2], 2), pageOf([3, 4], 4));
      await expect(client(twoPages.fetch).api.plants.list({ limit: 2 }).toArray({ max: 3 })).resolves.toEqual([
        plantOf({ id: 1n, name: 'p1' }),
        plantOf({ id: 2n, name: 'p2' }),
        plantOf({ id: 3n, name: 'p3' }),
      ]);
      expect(twoPages.sent).toHaveLength(2);

      const onePage = fakeFetch(pageOf([1, 2], 2));
      await expect(client(onePage.fetch).api.plants.list({ limit: 2 }).toArray({ max: 2 })).resolves.toHaveLength(2);
      expect(onePage.sent).toHaveLength(1);

      const all = fakeFetch(pageOf([1, 2], 2), pageOf([3]));
      await expect(client(all.fetch).api.plants.list().toArray({ max: Infinity })).resolves.toHaveLength(3);
    });

    it('reads the list anew for each pages() and toArray(), and refuses a max that is not a count', async () => {
      const { fetch, sent } = fakeFetch(pageOf([1]), pageOf([1]));
      const list = client(fetch).api.plants.list({ after: 0n });
      await list.toArray({ max: 10 });
      await collect(list.pages());
      expect(sent.map((s) => s.url)).toEqual([
        'http://plants.test/plants?after=0',
        'http://plants.test/plants?after=0',
      ]);
      await expect(list.toArray({ max: 0 })).rejects.toThrow(RangeError);
      await expect(list.toArray({ max: 1.5 })).rejects.toThrow(RangeError);
      expect(sent).toHaveLength(2);
    });
  });

  describe('userAgent, headers and hooks', () => {
    it("sends the client's User-Agent after the caller's own, and the caller's headers, per call over the client's", async () => {
      const { fetch, sent } = fakeFetch(error(503, 'down'), json(200, '[]'), json(200, '[]'));
      const { api } = client(fetch, {
        userAgent: 'inventory-sync/2.1',
        headers: { 'X-Gateway-Key': 'g', 'X-Team': 'a' },
      });
      await api.webhooks.list({ headers: { 'X-Request-Id': 'job-7', 'x-team': 'b' } });
      await client(fetch).api.webhooks.list();
      const attempt = expect.objectContaining({
        'user-agent': `inventory-sync/2.1 plant-store-client/${VERSION}`,
        'x-gateway-key': 'g',
        'x-team': 'b',
        'x-request-id': 'job-7',
        authorization: 'Bearer pst_token',
      });
      expect(sent.map((s) => s.headers)).toEqual([
        attempt,
        attempt,
        expect.objectContaining({ 'user-agent': `plant-store-client/${VERSION}` }),
      ]);
      expect(sent[2].headers).not.toHaveProperty('x-team');
    });

    it('refuses headers the client sets itself, and ones that are not headers, before sending anything', async () => {
      const { fetch, sent } = fakeFetch();
      expect(() => client(fetch, { headers: { Authorization: 'Bearer other' } })).toThrow(
        'headers must not set authorization: the token option sets it',
      );
      expect(() => client(fetch, { headers: { 'bad name': 'x' } })).toThrow(TypeError);
      expect(() => client(fetch, { userAgent: 'a\r\nInjected: 1' })).toThrow(TypeError);
      expect(() => client(fetch, { userAgent: ' ' })).toThrow(TypeError);
      const { api } = client(fetch);
      await expect(api.plants.create({ id: 1n, name: 'x' }, { headers: { 'Idempotency-Key': 'k' } })).rejects.toThrow(
        'options.headers must not set idempotency-key',
      );
      expect(sent).toEqual([]);
    });

    it('tells hooks of every attempt: method, url, status, duration, error, and only the headers the caller set', async () => {
      const events: [string, RequestEvent | ResponseEvent][] = [];
      const { fetch } = fakeFetch(
        networkFailure('ECONNRESET'),
        error(503, 'down'),
        json(200, '[]', { 'X-Request-Id': 'r-3' }),
      );
      const { api, retries } = client(fetch, {
        token: async () => 'pst_secret',
        headers: { 'X-Team': 'a' },
        hooks: {
          beforeRequest: (event) => events.push(['before', event]),
          afterResponse: (event) => events.push(['after', event]),
        },
      });
      await api.webhooks.list();
      const request = (attempt: number) => ({
        method: 'GET',
        url: 'http://plants.test/webhooks',
        attempt,
        headers: { 'x-team': 'a' },
      });
      expect(events).toEqual([
        ['before', request(1)],
        ['after', { ...request(1), status: 0, durationMs: expect.any(Number), error: retries[0].error }],
        ['before', request(2)],
        ['after', { ...request(2), status: 503, durationMs: expect.any(Number), error: retries[1].error }],
        ['before', request(3)],
        ['after', { ...request(3), status: 200, durationMs: expect.any(Number), requestId: 'r-3' }],
      ]);
      expect(retries.map((r) => r.error.kind)).toEqual(['network', 'http']);
      expect(JSON.stringify(events)).not.toContain('pst_secret');
    });

    it('tells afterResponse of an attempt the caller aborted or the timeout ended', async () => {
      const statuses: [number, string | undefined][] = [];
      const caller = new AbortController();
      const { fetch } = fakeFetch(hang(), hang());
      const { api } = client(fetch, {
        timeoutMs: 20,
        retries: 0,
        hooks: {
          beforeRequest: ({ attempt }) => statuses.push([-attempt, undefined]),
          afterResponse: (event) => statuses.push([event.status, event.error?.kind]),
        },
      });
      await expect(api.webhooks.list()).rejects.toMatchObject({ kind: 'timeout' });
      const aborted = api.webhooks.list({ signal: caller.signal, timeoutMs: 60_000 });
      caller.abort();
      await expect(aborted).rejects.toMatchObject({ kind: 'aborted' });
      // An abort before the attempt is sent makes no attempt, and tells no hook.
      await expect(api.webhooks.list({ signal: caller.signal })).rejects.toMatchObject({ kind: 'aborted' });
      expect(statuses).toEqual([
        [-1, undefined],
        [0, 'timeout'],
        [-1, undefined],
        [0, 'aborted'],
      ]);
    });

    it('fails the call with what a hook throws', async () => {
      const broken = new Error('logger down');
      const { fetch, sent } = fakeFetch(json(200, '[]'));
      const before = client(fetch, {
        hooks: {
          beforeRequest: () => {
            throw broken;
          },
        },
      });
      await expect(before.api.webhooks.list()).rejects.toBe(broken);
      expect(sent).toHaveLength(0);
      const after = client(fetch, {
        hooks: {
          afterResponse: () => {
            throw broken;
          },
        },
      });
      await expect(after.api.webhooks.list()).rejects.toBe(broken);
      expect(sent).toHaveLength(1);
    });
  });

  describe('a token no header can carry', () => {
    /** What is wrong with each, as the client names it: never the token around it. */
    const MALFORMED: [string, string][] = [
      ['a carriage return (CR)', '\r'],
      ['a line feed (LF)', '\n'],
      ['a NUL', '\0'],
      ['a tab', '\t'],
      ['the control character U+0001', '\x01'],
      ['the control character U+001B', '\x1b'],
      ['the control character U+007F', '\x7f'],
      ['a space', ' '],
    ];
    const SECRET = 'pst_3KXgW0mVqzT1bYc8hJ2nLr';
    /** The token with `character` inside it, at character 27 of 53, as a secret read badly from a file. */
    const badly = (character: string) => `${SECRET}${character}${SECRET}`;
    const problem = (what: string, source = 'token') =>
      `${source} has ${what} at character 27 of 53: a bearer token is visible ASCII only (one read from a file may need trimming)`;

    /** Every form of a failure a caller may log. */
    const forms = (failure: unknown, ...more: unknown[]) => [
      String(failure),
      JSON.stringify(failure),
      inspect(failure, { depth: 5 }),
      ...more.map((value) => inspect(value, { depth: 5 })),
    ];

    it.each(MALFORMED)(
      'refuses a token with %s in it when the client is made, naming that and not the token',
      (what, character) => {
        const { fetch, sent } = fakeFetch();
        let failure: unknown;
        try {
          client(fetch, { token: badly(character) });
        } catch (thrown) {
          failure = thrown;
        }
        expect(failure).toEqual(new TypeError(problem(what)));
        for (const form of forms(failure)) expect(form).not.toContain(SECRET);
        expect(sent).toEqual([]);
      },
    );

    it.each(MALFORMED)(
      'fails a call whose token function gives a token with %s in it before sending, never retried, unseen by the hooks',
      async (what, character) => {
        // The platform's fetch, which would refuse the header itself, quoting it.
        const calls: string[] = [];
        const fetch = ((input: string | URL | Request, init?: RequestInit) => {
          calls.push(String(input));
          return globalThis.fetch(input, init);
        }) as typeof globalThis.fetch;
        const events: unknown[] = [];
        const { api, retries } = client(fetch, {
          baseUrl: 'http://127.0.0.1:9',
          token: async () => badly(character),
          hooks: { beforeRequest: (event) => events.push(event), afterResponse: (event) => events.push(event) },
        });
        const failure = await api.webhooks.list().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(failure).toEqual(new TypeError(problem(what, "the token function's token")));
        expect(failure).not.toBeInstanceOf(PlantStoreError);
        for (const form of forms(failure, events, retries)) expect(form).not.toContain(SECRET);
        expect({ calls, retries, events }).toEqual({ calls: [], retries: [], events: [] });
      },
    );

    it('refuses an empty token, and a token function that gives no string', async () => {
      const { fetch, sent } = fakeFetch();
      expect(() => client(fetch, { token: '' })).toThrow(new TypeError('token is empty'));
      const { api } = client(fetch, { token: (() => undefined) as unknown as () => string });
      await expect(api.webhooks.list()).rejects.toThrow(new TypeError("the token function's token is not a string"));
      expect(sent).toEqual([]);
    });
  });

  describe('per-call timeoutMs', () => {
    it("bounds each attempt of the call instead of the client's timeoutMs", async () => {
      const { fetch, sent } = fakeFetch(hang(), hang());
      const failure = await caught(
        client(fetch, { timeoutMs: 60_000 }).api.webhooks.list({ timeoutMs: 20, retries: 1 }),
      );
      expect(failure).toMatchObject({ kind: 'timeout', attempts: 2 });
      expect(failure.message).toContain('within 20 ms');
      expect(sent).toHaveLength(2);
    });

    it('is refused when it is not a positive number', async () => {
      const { fetch, sent } = fakeFetch();
      await expect(client(fetch).api.plants.delete(1n, { timeoutMs: 0 })).rejects.toThrow(RangeError);
      await expect(collect(client(fetch).api.plants.list({ timeoutMs: -1 }))).rejects.toThrow(RangeError);
      expect(sent).toEqual([]);
    });
  });

  it('refuses options that cannot work', () => {
    const { fetch } = fakeFetch();
    expect(() => createClient({ baseUrl: 'ftp://x.test', token: 't', fetch })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: 'http://x.test', token: 't', fetch, timeoutMs: 0 })).toThrow(RangeError);
    expect(() => createClient({ baseUrl: 'http://x.test', token: 't', fetch, retries: -1 })).toThrow(RangeError);
  });
});
