import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { PlantStoreError, createClient, type Plant, type PlantStoreClient } from '../clients/typescript/src';
import { testDatabases } from './utils/databases';
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
    client = createClient({ baseUrl, token: await t.token({ subject: 'client-e2e' }) });
  });

  it('creates, lists page by page and deletes plants, int64 ids exact at both ends', async () => {
    const ids = [MIN, -1n, 0n, 9007199254740993n, 9007199254740995n, MAX];
    for (const id of [...ids].reverse()) {
      await expect(
        client.plants.create({ id, name: `Plant ${id}`, tag: id < 0n ? 'negative' : undefined }),
      ).resolves.toEqual(id < 0n ? { id, name: `Plant ${id}`, tag: 'negative' } : { id, name: `Plant ${id}` });
    }
    // Six plants at most three a page (PLANTS_MAX_PAGE), two a page when asked: Link followed each time.
    await expect(all(client)).resolves.toEqual(ids.map((id) => expect.objectContaining({ id })));
    expect((await all(client, 2)).map((plant) => plant.id)).toEqual(ids);

    await client.plants.delete(MAX);
    await client.plants.delete(MIN);
    expect((await all(client)).map((plant) => plant.id)).toEqual(ids.slice(1, -1));
  });

  it("creates with the caller's Idempotency-Key, which the service takes", async () => {
    await expect(client.plants.create({ id: 1n, name: 'Keyed' }, { idempotencyKey: 'e2e-key-1' })).resolves.toEqual({
      id: 1n,
      name: 'Keyed',
    });
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
    expect(webhook).toMatchObject({ id: expect.any(BigInt), events: ['plant.created'], enabled: true });
    expect(webhook.secret).toMatch(/^whsec_/);
    receiver.expectSecret('/client', webhook.secret);
    await expect(client.webhooks.list()).resolves.toEqual([
      expect.objectContaining({ id: webhook.id, url: receiver.url('/client') }),
    ]);

    await client.plants.create({ id: MAX, name: 'Announced' });
    await waitFor(async () => (await client.webhooks.deliveries(webhook.id)).length > 0, { what: 'a delivery' });
    const [attempt] = await client.webhooks.deliveries(webhook.id);
    expect(attempt).toMatchObject({ type: 'plant.created', attempt: 1, statusCode: 204 });
    expect(receiver.at('/client')[0].verified).toMatchObject({ ok: true });

    await client.webhooks.delete(webhook.id);
    await expect(client.webhooks.list()).resolves.toEqual([]);
    await expect(client.webhooks.deliveries(webhook.id)).rejects.toMatchObject({ status: 404 });
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
    await expect(all(client)).resolves.toEqual([{ id: 1n, name: 'Behind a proxy' }]);
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
    expect(statuses).toEqual([204, 404]);
    await expect(all(client)).resolves.not.toContainEqual(expect.objectContaining({ id: 2n }));
  });
});
