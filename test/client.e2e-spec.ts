import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import {
  PlantStoreError,
  createClient,
  type Plant,
  type PlantStoreClient,
  type RequestEvent,
  type ResponseEvent,
} from '../clients/typescript/src';
import {
  anyDateTime,
  expectedCreatedWebhook,
  expectedEvent,
  expectedPlant,
  expectedRotatedWebhook,
  expectedWebhook,
} from './utils/bodies';
import { testDatabases } from './utils/databases';
import { PathPrefixProxy } from './utils/path-prefix-proxy';
import { TcpProxy } from './utils/tcp-proxy';
import { TestApp, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

const MAX = 9223372036854775807n;
const MIN = -9223372036854775808n;

/** The app on a real port, as a client meets it. */
async function listening(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${((t.app.getHttpServer() as Server).address() as AddressInfo).port}`;
}

async function all(client: PlantStoreClient, limit?: number): Promise<Plant[]> {
  const plants: Plant[] = [];
  for await (const plant of client.plants.list({ limit })) plants.push(plant);
  return plants;
}

async function failure(promise: Promise<unknown>): Promise<PlantStoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlantStoreError);
  return error as PlantStoreError;
}

describe.each(testDatabases())('The TypeScript client against the service on %s', (database) => {
  let t: TestApp;
  let baseUrl: string;
  let receiver: WebhookReceiver;
  let token: string;
  let client: PlantStoreClient;

  beforeAll(async () => {
    t = await startTestApp(database, { ...WEBHOOK_TEST_ENV, PLANTS_MAX_PAGE: '3' });
    baseUrl = await listening(t);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'client-e2e' });
    client = createClient({ baseUrl, token });
  });

  it('creates, lists page by page and deletes plants, int64 ids exact at both ends', async () => {
    const ids = [MIN, -1n, 0n, 9007199254740993n, 9007199254740995n, MAX];
    for (const id of [...ids].reverse()) {
      await expect(
        client.plants.create({ id, name: `Plant ${id}`, tag: id < 0n ? 'negative' : undefined }),
      ).resolves.toEqual(expectedPlant({ id, name: `Plant ${id}`, tag: id < 0n ? 'negative' : undefined }));
    }
    // Six plants at most three a page (PLANTS_MAX_PAGE), two a page when asked: Link followed each time.
    await expect(all(client)).resolves.toEqual(
      ids.map((id) => expectedPlant({ id, name: `Plant ${id}`, tag: id < 0n ? 'negative' : undefined })),
    );
    expect((await all(client, 2)).map((plant) => plant.id)).toEqual(ids);

    await client.plants.delete(MAX);
    await client.plants.delete(MIN);
    expect((await all(client)).map((plant) => plant.id)).toEqual(ids.slice(1, -1));
  });

  it("creates with the caller's Idempotency-Key, which the service takes", async () => {
    await expect(client.plants.create({ id: 1n, name: 'Keyed' }, { idempotencyKey: 'e2e-key-1' })).resolves.toEqual(
      expectedPlant({ id: 1n, name: 'Keyed' }),
    );
  });

  it("throws one typed error for the service's refusals, 4xx told from 5xx", async () => {
    await client.plants.create({ id: 7n, name: 'Seven' });
    const duplicate = await failure(client.plants.create({ id: 7n, name: 'Again' }));
    expect(duplicate).toMatchObject({
      kind: 'http',
      status: 409,
      attempts: 1,
      isClientError: true,
      isServerError: false,
    });
    expect(duplicate.message).toMatch(/already/);
    expect(duplicate.requestId).toEqual(expect.any(String));

    await expect(client.plants.create({ id: 8n, name: '   ' })).rejects.toMatchObject({ status: 400 });
    await expect(client.plants.delete(123n)).rejects.toMatchObject({ status: 404, attempts: 1 });
    const stranger = createClient({ baseUrl, token: 'pst_unknown' });
    await expect(all(stranger)).rejects.toMatchObject({ kind: 'http', status: 401 });
  });

  it('manages webhook subscriptions and reads their deliveries', async () => {
    const webhook = await client.webhooks.create({ url: receiver.url('/client'), events: ['plant.created'] });
    const subscribed = { id: webhook.id, url: receiver.url('/client'), events: ['plant.created'] };
    expect(webhook).toEqual(expectedCreatedWebhook({ ...subscribed, id: expect.any(BigInt) }));
    receiver.expectSecret('/client', webhook.secret);
    await expect(client.webhooks.list()).resolves.toEqual([expectedWebhook(subscribed)]);

    await client.plants.create({ id: MAX, name: 'Announced' });
    await waitFor(async () => (await client.webhooks.deliveries(webhook.id)).length > 0, { what: 'a delivery' });
    const [attempt] = await client.webhooks.deliveries(webhook.id);
    expect(attempt).toMatchObject({ type: 'plant.created', attempt: 1, statusCode: 204 });
    expect(receiver.at('/client')[0].verified).toMatchObject({ ok: true });

    await client.webhooks.delete(webhook.id);
    await expect(client.webhooks.list()).resolves.toEqual([]);
    await expect(client.webhooks.deliveries(webhook.id)).rejects.toMatchObject({ status: 404 });
  });

  it('changes, rotates, tests, resends and recovers a subscription, and reads the events back', async () => {
    const webhook = await client.webhooks.create({ url: receiver.url('/client-years'), events: ['plant.created'] });
    receiver.expectSecret('/client-years', webhook.secret);
    const changed = {
      id: webhook.id,
      url: receiver.url('/client-years'),
      events: ['plant.created', 'plant.deleted'],
      description: 'Kept for years',
    };
    await expect(
      client.webhooks.update(webhook.id, { description: 'Kept for years', events: ['plant.created', 'plant.deleted'] }),
    ).resolves.toEqual(expectedWebhook(changed));

    const tested = await client.webhooks.test(webhook.id);
    expect(tested).toMatchObject({ delivered: true, statusCode: 204, eventId: expect.stringMatching(/^test_/) });

    const rotated = await client.webhooks.rotateSecret(webhook.id, { gracePeriodSeconds: 60 });
    expect(rotated).toEqual(expectedRotatedWebhook({ ...changed, previousSecretExpiresAt: anyDateTime }));
    expect(rotated.secret).not.toBe(webhook.secret);
    receiver.expectSecret('/client-years', rotated.secret);

    // Disabled, a change is held; re-enabled and recovered, it is sent.
    await expect(client.webhooks.update(webhook.id, { enabled: false })).resolves.toMatchObject({ enabled: false });
    const since = new Date(Date.now() - 1000);
    await client.plants.create({ id: MAX, name: 'Held' });
    await expect(client.webhooks.recover(webhook.id, since)).rejects.toMatchObject({ status: 409 });
    await client.webhooks.update(webhook.id, { enabled: true });
    await expect(client.webhooks.recover(webhook.id, since)).resolves.toEqual({ since: since.toISOString() });
    await waitFor(() => receiver.at('/client-years').length === 2, { what: 'the test and the recovered event' });
    const recovered = receiver.at('/client-years')[1];
    expect(recovered.verified).toMatchObject({ ok: true });

    const events = await client.events.list({ order: 'asc' }).toArray({ max: Infinity });
    expect(events).toEqual([
      expectedEvent('plant.created', { id: MAX, name: 'Held' }, { id: recovered.headers['webhook-id'] as string }),
    ]);
    await waitFor(async () => (await client.webhooks.deliveries(webhook.id)).length === 1, {
      what: 'the attempt recorded',
    });
    await expect(client.webhooks.resend(webhook.id, events[0].id)).resolves.toEqual({
      eventId: events[0].id,
      type: 'plant.created',
    });
    await waitFor(() => receiver.at('/client-years').length === 3, { what: 'the resent event' });
    expect(receiver.at('/client-years')[2].headers['webhook-id']).toBe(events[0].id);
    const unknown = `evt_${BigInt(events[0].id.slice('evt_'.length)) + 1000n}`;
    await expect(client.webhooks.resend(webhook.id, unknown)).rejects.toMatchObject({ status: 404 });
  });

  // Every call above passed the client's checks of the answer's shape; these read what else it said.
  it("gives each answer's metadata: status, request id, rate limit, and a create's replay", async () => {
    const first = await client.plants.create({ id: 5n, name: 'Meta' }, { idempotencyKey: 'e2e-meta' }).withResponse();
    expect(first).toEqual({
      data: expectedPlant({ id: 5n, name: 'Meta' }),
      response: {
        status: 200,
        headers: expect.any(Headers),
        url: `${baseUrl}/plants`,
        requestId: expect.any(String),
        replayed: false,
        rateLimit: {
          remaining: expect.any(Number),
          resetSeconds: expect.any(Number),
          limit: 1_000_000,
          windowSeconds: 60,
        },
        attempts: 1,
        idempotencyKey: 'e2e-meta',
      },
    });
    const again = await client.plants.create({ id: 5n, name: 'Meta' }, { idempotencyKey: 'e2e-meta' }).withResponse();
    expect(again.data).toEqual(first.data);
    expect(again.response).toMatchObject({ status: 200, replayed: true });

    const own = await client.webhooks.list({ headers: { 'X-Request-Id': 'e2e-own-request-id' } }).withResponse();
    expect(own).toMatchObject({ data: [], response: { status: 200, requestId: 'e2e-own-request-id' } });

    await client.plants.create({ id: 6n, name: 'Meta 2' });
    const pages = [];
    for await (const page of client.plants.list({ limit: 1 }).pages()) pages.push(page);
    expect(pages.map(({ data, response }) => [data.map((plant) => plant.id), response.status])).toEqual(
      expect.arrayContaining([
        [[5n], 200],
        [[6n], 200],
      ]),
    );
    expect(pages.every(({ response }) => response.rateLimit !== undefined && response.requestId)).toBe(true);
    await expect(client.plants.list({ limit: 1 }).toArray({ max: 1 })).resolves.toEqual([first.data]);

    await expect(client.plants.delete(5n).withResponse()).resolves.toMatchObject({
      data: undefined,
      response: { status: 204, attempts: 1 },
    });
  });

  it('tells the hooks of every request, handing them only the headers the caller set', async () => {
    const events: [string, RequestEvent | ResponseEvent][] = [];
    const hooked = createClient({
      baseUrl,
      token,
      userAgent: 'client-e2e/1.0',
      headers: { 'X-Team': 'e2e' },
      hooks: {
        beforeRequest: (event) => events.push(['before', event]),
        afterResponse: (event) => events.push(['after', event]),
      },
    });
    await hooked.plants.create({ id: 1n, name: 'Hooked' });
    await expect(hooked.plants.delete(2n)).rejects.toMatchObject({ status: 404 });
    const request = (method: string, url: string) => ({ method, url, attempt: 1, headers: { 'x-team': 'e2e' } });
    const answered = (status: number) => ({ status, durationMs: expect.any(Number), requestId: expect.any(String) });
    expect(events).toEqual([
      ['before', request('POST', `${baseUrl}/plants`)],
      ['after', { ...request('POST', `${baseUrl}/plants`), ...answered(200) }],
      ['before', request('DELETE', `${baseUrl}/plants/2`)],
      ['after', { ...request('DELETE', `${baseUrl}/plants/2`), ...answered(404), error: expect.any(PlantStoreError) }],
    ]);
    expect(
      JSON.stringify(events, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
    ).not.toContain(token);
  });

  it("times out an attempt after the call's own timeoutMs", async () => {
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(baseUrl).port));
    await proxy.start();
    try {
      const patient = createClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token, timeoutMs: 60_000 });
      proxy.blackhole();
      const timedOut = await failure(patient.plants.list({ timeoutMs: 300, retries: 0 }).toArray({ max: 1 }));
      expect(timedOut).toMatchObject({ kind: 'timeout', status: 0, attempts: 1 });
      expect(timedOut.message).toContain('within 300 ms');
    } finally {
      await proxy.cut();
    }
  });

  it('lists page after page through a path-prefix gateway, every request under the prefix', async () => {
    for (const id of [1n, 2n, 3n, 4n, 5n]) await client.plants.create({ id, name: `Behind ${id}` });
    const gateway = new PathPrefixProxy('/plant-store', Number(new URL(baseUrl).port));
    const baseUrlBehind = await gateway.start();
    try {
      const behind = createClient({ baseUrl: baseUrlBehind, token });
      const pages = [];
      for await (const { data, response } of behind.plants.list({ limit: 2 }).pages()) {
        pages.push({ ids: data.map((plant) => plant.id), url: response.url });
      }
      // Each next page is the service's Link resolved against the page it came with: under the prefix.
      expect(pages).toEqual([
        { ids: [1n, 2n], url: `${baseUrlBehind}/plants?limit=2` },
        { ids: [3n, 4n], url: `${baseUrlBehind}/plants?limit=2&after=2` },
        { ids: [5n], url: `${baseUrlBehind}/plants?limit=2&after=4` },
      ]);
      await expect(behind.plants.list({ limit: 2 }).toArray({ max: 3 })).resolves.toEqual([
        expect.objectContaining({ id: 1n }),
        expect.objectContaining({ id: 2n }),
        expect.objectContaining({ id: 3n }),
      ]);
      expect(gateway.refused).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it('refuses a root-relative link, outside the gateway prefix, without sending the token there', async () => {
    for (const id of [1n, 2n, 3n]) await client.plants.create({ id, name: `Behind ${id}` });
    const gateway = new PathPrefixProxy('/plant-store', Number(new URL(baseUrl).port), { rootRelativeLinks: true });
    const behind = createClient({ baseUrl: await gateway.start(), token });
    try {
      const refused = await failure(behind.plants.list({ limit: 2 }).toArray({ max: Infinity }));
      expect(refused).toMatchObject({ kind: 'invalid-response', status: 200, attempts: 1 });
      expect(refused.message).toContain(`the next page (http://127.0.0.1:${gateway.port}/plants?limit=2&after=2)`);
      // The gateway would have answered 404 to /plants; the client never asked.
      expect(gateway.refused).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});

describe('The TypeScript client against a limited service', () => {
  let t: TestApp;
  let baseUrl: string;

  // One request a minute, and no webhook key: every call after the first is 429, /webhooks is 503.
  beforeAll(async () => {
    t = await startTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '1' });
    baseUrl = await listening(t);
  });
  afterAll(() => t.close());

  it('retries a 503, then reports a 429 whose Retry-After is longer than it may wait, with the wait', async () => {
    const retried: number[] = [];
    const client = createClient({
      baseUrl,
      token: await t.token({ subject: 'limited' }),
      maxRetryAfterMs: 1000,
      backoffBaseMs: 1,
      onRetry: (event) => retried.push(event.error.status),
    });
    const limited = await failure(client.webhooks.list());
    expect(retried).toEqual([503]);
    expect(limited).toMatchObject({ kind: 'http', status: 429, attempts: 2 });
    expect(limited.retryAfterMs).toBeGreaterThan(1000);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(60_000);
  });
});

describe('The TypeScript client through a failing network', () => {
  let t: TestApp;
  let direct: string;
  let proxy: TcpProxy;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    direct = await listening(t);
    proxy = new TcpProxy('127.0.0.1', Number(new URL(direct).port));
    await proxy.start();
    token = await t.token({ subject: 'network' });
  });
  afterAll(async () => {
    await proxy.cut();
    await t.close();
  });

  it('times out an attempt the network swallows, and retries it once the network is back', async () => {
    await createClient({ baseUrl: direct, token }).plants.create({ id: 1n, name: 'Behind a proxy' });
    const retried: string[] = [];
    const client = createClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      token,
      // Long enough that a loaded machine answers the retry in time, short enough to wait out once.
      timeoutMs: 1000,
      backoffBaseMs: 1,
      onRetry: (event) => {
        retried.push(event.error.kind);
        void proxy.restore();
      },
    });
    proxy.blackhole();
    await expect(all(client)).resolves.toEqual([expectedPlant({ id: 1n, name: 'Behind a proxy' })]);
    expect(retried[0]).toBe('timeout');
  });

  it('resolves a delete whose first answer was lost after the service had deleted', async () => {
    await createClient({ baseUrl: direct, token }).plants.create({ id: 2n, name: 'Deleted once' });
    const statuses: number[] = [];
    // The service answers the first attempt, then the connection drops before the client reads it.
    const losesFirstAnswer: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      if (statuses.length > 1) return response;
      await response.arrayBuffer();
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      });
    };
    const client = createClient({ baseUrl: direct, token, fetch: losesFirstAnswer, backoffBaseMs: 1 });
    await expect(client.plants.delete(2n)).resolves.toBeUndefined();
    // The retry carries the first attempt's Idempotency-Key: it gets that delete's 204 again.
    expect(statuses).toEqual([204, 204]);
    await expect(all(client)).resolves.not.toContainEqual(expect.objectContaining({ id: 2n }));
  });
});
