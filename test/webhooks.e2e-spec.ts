import { readFileSync } from 'node:fs';
import { MetricsService } from '../src/metrics/metrics.service';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from '../src/webhooks/webhooks.limits';
import {
  anyDateTime,
  exactBody,
  expectedCreatedWebhook,
  expectedDelivery,
  expectedEventData,
  expectedWebhook,
} from './utils/bodies';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, exactJson, expectErrorBody, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

interface Created {
  id: bigint;
  secret: string;
}

describe.each(testDatabases())('Webhooks on %s', (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'hooked' });
  });

  const subscribe = async (path: string, events = ['plant.created', 'plant.deleted'], as = token): Promise<Created> => {
    const res = await t
      .http()
      .post('/webhooks')
      .set(bearer(as))
      .send({ url: receiver.url(path), events });
    expect(res.status).toBe(201);
    const body = exactJson<Created>(res);
    receiver.expectSecret(path, body.secret);
    return body;
  };
  const createPlant = async (id: bigint | number, name = `Plant ${id}`, tag?: string, as = token) => {
    const res = await t
      .http()
      .post('/plants')
      .set(bearer(as))
      .set('Content-Type', 'application/json')
      .send(`{"id":${id},"name":${JSON.stringify(name)}${tag ? `,"tag":${JSON.stringify(tag)}` : ''}}`);
    expect(res.status).toBe(200);
  };
  const attempts = async (id: bigint) => {
    const res = await t.http().get(`/webhooks/${id}/deliveries`).set(bearer(token));
    expect(res.status).toBe(200);
    return res.body as { eventId: string; type: string; attempt: number; statusCode?: number; error?: string }[];
  };

  it('answers 201 with a whsec_ secret shown once; lists without secrets', async () => {
    const res = await t
      .http()
      .post('/webhooks')
      .set(bearer(token))
      .send({ url: receiver.url('/a'), events: ['plant.created'], description: 'Inventory sync' });
    expect(res.status).toBe(201);
    const created = exactJson<Record<string, unknown>>(res);
    const subscription = { url: receiver.url('/a'), events: ['plant.created'], description: 'Inventory sync' };
    expect(created).toEqual(expectedCreatedWebhook({ ...subscription, id: expect.any(BigInt) }));
    const list = await t.http().get('/webhooks').set(bearer(token));
    expect(list.status).toBe(200);
    const listed = exactJson<Record<string, unknown>[]>(list);
    expect(listed).toEqual([expectedWebhook({ ...subscription, id: created.id, createdAt: created.createdAt })]);
    expect(list.text).not.toContain('whsec_');
    const stored = (await t.dataSource.query('SELECT secret FROM webhook_subscriptions')) as { secret: string }[];
    expect(stored).toHaveLength(1);
    expect(stored[0].secret).not.toContain((created.secret as string).slice(6));
  });

  it('delivers plant.created and plant.deleted with exact int64 ids, signed per Standard Webhooks', async () => {
    await subscribe('/both');
    const big = 9_007_199_254_740_993n;
    await createPlant(big, 'Monstera', 'tropical');
    expect((await t.http().delete(`/plants/${big}`).set(bearer(token))).status).toBe(204);
    await waitFor(() => receiver.at('/both').length >= 2, { what: 'two deliveries' });
    const [created, deleted] = receiver.at('/both');
    for (const delivery of [created, deleted]) {
      expect(delivery.verified).toEqual({ ok: true, payload: expect.anything() });
      expect(delivery.headers['webhook-id']).toMatch(/^evt_\d+$/);
      expect(delivery.headers['content-type']).toBe('application/json');
    }
    // The id as a plain JSON integer, all its digits: a receiver's exact parser reads it as it was.
    for (const delivery of [created, deleted]) expect(delivery.body).toContain('"data":{"id":9007199254740993');
    expect(exactBody(created.body)).toEqual(
      expectedDelivery('plant.created', { id: big, name: 'Monstera', tag: 'tropical' }),
    );
    expect(exactBody(deleted.body)).toEqual(expectedDelivery('plant.deleted', { id: big }));
    expect(created.headers['webhook-id']).not.toBe(deleted.headers['webhook-id']);
  });

  it('records nothing for events a subscription did not ask for, or for another owner', async () => {
    await subscribe('/created-only', ['plant.created']);
    const other = await t.token({ subject: 'someone-else' });
    await createPlant(1, 'Other', undefined, other);
    await createPlant(2);
    expect((await t.http().delete('/plants/2').set(bearer(token))).status).toBe(204);
    await waitFor(() => receiver.at('/created-only').length >= 1);
    const rows = (await t.dataSource.query('SELECT event_type, data FROM webhook_deliveries')) as {
      event_type: string;
      data: string;
    }[];
    expect(rows.map((row) => [row.event_type, exactBody(row.data)])).toEqual([
      ['plant.created', expectedEventData('plant.created', { id: 2n, name: 'Plant 2' })],
    ]);
  });

  it('retries a failing receiver with the same webhook-id until it succeeds', async () => {
    receiver.answer('/flaky', 500, 503, 200);
    const { id } = await subscribe('/flaky', ['plant.created']);
    await createPlant(7);
    await waitFor(async () => (await attempts(id)).some((a) => a.statusCode === 200), { what: 'a success' });
    const seen = receiver.at('/flaky');
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(seen.every((d) => d.verified.ok)).toBe(true);
    expect((await attempts(id)).map((a) => [a.attempt, a.statusCode])).toEqual([
      [3, 200],
      [2, 503],
      [1, 500],
    ]);
  });

  it('disables a subscription whose endpoint answers 410 Gone, and sends nothing more to it, holding what comes', async () => {
    receiver.answer('/gone', 410);
    const { id } = await subscribe('/gone', ['plant.created']);
    await createPlant(1);
    await waitFor(
      async () =>
        exactJson<{ enabled: boolean }[]>(await t.http().get('/webhooks').set(bearer(token)))[0].enabled === false,
      {
        what: 'the subscription disabled',
      },
    );
    expect(exactJson(await t.http().get('/webhooks').set(bearer(token)))).toEqual([
      expectedWebhook({
        id,
        url: receiver.url('/gone'),
        events: ['plant.created'],
        enabled: false,
        disabledAt: anyDateTime,
        disabledReason: 'the endpoint answered 410 Gone',
      }),
    ]);
    await createPlant(2);
    const rows = (await t.dataSource.query('SELECT state FROM webhook_deliveries ORDER BY id')) as { state: string }[];
    expect(rows.map((row) => row.state)).toEqual(['failed', 'held']);
    expect(receiver.at('/gone')).toHaveLength(1);
    expect((await attempts(id)).map((a) => a.statusCode)).toEqual([410]);
  });

  it('cuts a receiver that hangs at the timeout and tries again', async () => {
    receiver.answer('/slow', 'hang', 200);
    const { id } = await subscribe('/slow', ['plant.created']);
    await createPlant(3);
    await waitFor(async () => (await attempts(id)).some((a) => a.statusCode === 200), {
      what: 'the retry',
      timeoutMs: 15_000,
    });
    const [second, first] = await attempts(id);
    expect(first).toMatchObject({ attempt: 1, error: 'timeout after 1000 ms' });
    expect(first.statusCode).toBeUndefined();
    expect(second).toMatchObject({ attempt: 2, statusCode: 200 });
    expect(new Set(receiver.at('/slow').map((d) => d.headers['webhook-id'])).size).toBe(1);
  });

  it('marks an event failed once the schedule is spent', async () => {
    receiver.answer('/down', 500);
    const { id } = await subscribe('/down', ['plant.created']);
    await createPlant(4);
    await waitFor(
      async () => {
        const rows = (await t.dataSource.query('SELECT state FROM webhook_deliveries')) as { state: string }[];
        return rows[0]?.state === 'failed';
      },
      { what: 'the event marked failed' },
    );
    // The first attempt and one per step of the 3-step schedule.
    expect((await attempts(id)).map((a) => a.attempt)).toEqual([4, 3, 2, 1]);
    expect(receiver.at('/down')).toHaveLength(4);
    // Still enabled: 5 days of failures (WEBHOOK_DISABLE_AFTER) have not passed.
    expect(((await t.http().get('/webhooks').set(bearer(token))).body as { enabled: boolean }[])[0].enabled).toBe(true);
  });

  it('stops delivering once a subscription is deleted', async () => {
    receiver.answer('/removed', 500);
    const { id } = await subscribe('/removed', ['plant.created']);
    await createPlant(5);
    await waitFor(() => receiver.at('/removed').length >= 1);
    expect((await t.http().delete(`/webhooks/${id}`).set(bearer(token))).status).toBe(204);
    const rows = (await t.dataSource.query('SELECT COUNT(*) AS n FROM webhook_deliveries')) as { n: unknown }[];
    expect(Number(rows[0].n)).toBe(0);
    expectErrorBody(await t.http().get(`/webhooks/${id}/deliveries`).set(bearer(token)), 404);
  });

  it("answers 404 for another user's subscription, and keeps it", async () => {
    const { id } = await subscribe('/mine', ['plant.created']);
    const other = await t.token({ subject: 'intruder' });
    expectErrorBody(await t.http().delete(`/webhooks/${id}`).set(bearer(other)), 404);
    expectErrorBody(await t.http().get(`/webhooks/${id}/deliveries`).set(bearer(other)), 404);
    expect((await t.http().get('/webhooks').set(bearer(other))).body).toEqual([]);
    expect(((await t.http().get('/webhooks').set(bearer(token))).body as unknown[]).length).toBe(1);
  });

  it('needs the webhooks:manage scope', async () => {
    const plantsOnly = await t.token({ subject: 'hooked', scopes: ['plants:read', 'plants:write'] });
    const res = await t.http().get('/webhooks').set(bearer(plantsOnly));
    expectErrorBody(res, 403);
    expect(res.body.message).toMatch(/webhooks:manage/);
    expectErrorBody(
      await t
        .http()
        .post('/webhooks')
        .set(bearer(plantsOnly))
        .send({ url: receiver.url('/x'), events: ['plant.created'] }),
      403,
    );
  });

  it.each([
    [{ url: 'http://127.0.0.1/x', events: [] }, /events must contain at least 1 elements/],
    [
      { url: 'http://127.0.0.1/x', events: ['plant.updated'] },
      /each value in events must be one of plant.created, plant.deleted/,
    ],
    [{ url: 'not a url', events: ['plant.created'] }, /url/],
    [{ url: 'ftp://example.com/x', events: ['plant.created'] }, /url/],
    [{ url: 'http://user:pw@127.0.0.1/x', events: ['plant.created'] }, /url/],
    [{ events: ['plant.created'] }, /url/],
    [
      { url: 'http://127.0.0.1/x', events: ['plant.created'], secret: 'whsec_mine' },
      /property secret should not exist/,
    ],
    [{ url: `http://127.0.0.1/${'x'.repeat(2048)}`, events: ['plant.created'] }, /url/],
  ])('refuses %j with 400', async (body, message) => {
    const res = await t.http().post('/webhooks').set(bearer(token)).send(body);
    expectErrorBody(res, 400);
    expect(res.body.message).toMatch(message);
  });

  it('refuses a subscription past the per-user limit with 409', async () => {
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_OWNER; i++) await subscribe(`/many-${i}`, ['plant.created']);
    const res = await t
      .http()
      .post('/webhooks')
      .set(bearer(token))
      .send({ url: receiver.url('/eleven'), events: ['plant.created'] });
    expectErrorBody(res, 409);
  });

  it('counts deliveries in webhook_deliveries_total and times them', async () => {
    await subscribe('/counted', ['plant.created']);
    await createPlant(11);
    await waitFor(() => receiver.at('/counted').length >= 1);
    const metrics = t.app.get(MetricsService);
    await waitFor(async () =>
      /webhook_deliveries_total\{event="plant.created",result="delivered"\} [1-9]/.test(
        await metrics.registry.metrics(),
      ),
    );
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/webhook_delivery_duration_seconds_count\{event="plant.created"\} [1-9]/);
    expect(text).toMatch(/^webhook_deliveries_due \d+$/m);
  });
});

describe.each(testDatabases())('Webhook subscriptions failing for WEBHOOK_DISABLE_AFTER on %s', (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // Retries every 100 ms for longer than the 500 ms after which a failing subscription is disabled.
    t = await startTestApp(database, {
      ...WEBHOOK_TEST_ENV,
      WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '100ms').join(','),
      WEBHOOK_DISABLE_AFTER: '500ms',
    });
    await t.reset();
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('are disabled, say why in GET /webhooks, and hold what comes after', async () => {
    const token = await t.token({ subject: 'failing' });
    receiver.answer('/failing', 500);
    const res = await t
      .http()
      .post('/webhooks')
      .set(bearer(token))
      .send({ url: receiver.url('/failing'), events: ['plant.created'] });
    expect(res.status).toBe(201);
    await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":1,"name":"x"}');
    await waitFor(
      async () =>
        ((await t.http().get('/webhooks').set(bearer(token))).body as { enabled: boolean }[])[0].enabled === false,
      { what: 'the subscription disabled' },
    );
    expect(exactJson(await t.http().get('/webhooks').set(bearer(token)))).toEqual([
      expectedWebhook({
        id: exactJson<{ id: bigint }>(res).id,
        url: receiver.url('/failing'),
        events: ['plant.created'],
        enabled: false,
        disabledAt: anyDateTime,
        disabledReason: 'deliveries failed for 500ms without a success',
      }),
    ]);
    const attempts = receiver.at('/failing').length;
    expect(attempts).toBeGreaterThan(2);
    // Its retries not spent, the event is held when the subscription is disabled: a recovery sends it.
    const rows = (await t.dataSource.query('SELECT state FROM webhook_deliveries')) as { state: string }[];
    expect(rows.map((row) => row.state)).toEqual(['held']);
    await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":2,"name":"y"}');
    const after = (await t.dataSource.query('SELECT state FROM webhook_deliveries ORDER BY id')) as { state: string }[];
    expect(after.map((row) => row.state)).toEqual(['held', 'held']);
    expect(receiver.at('/failing')).toHaveLength(attempts);
  });
});

describe.each(testDatabases())('Webhooks without WEBHOOK_SECRET_KEY on %s', (database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(database);
  });
  afterAll(() => t.close());

  it('answer 503 naming the setting, and plants work as before', async () => {
    const token = await t.token({ subject: 'unconfigured' });
    const res = await t.http().get('/webhooks').set(bearer(token));
    expectErrorBody(res, 503);
    expect(res.body.message).toMatch(/WEBHOOK_SECRET_KEY/);
    expect((await t.http().get('/plants').set(bearer(token))).status).toBe(200);
  });
});

describe('Webhooks in development on the embedded database, without WEBHOOK_SECRET_KEY', () => {
  const lenient = Object.fromEntries(
    Object.entries(WEBHOOK_TEST_ENV).filter(([name]) => name !== 'WEBHOOK_SECRET_KEY'),
  );
  let t: TestApp;
  afterEach(() => t.close());

  it('work under a development key kept beside the database file, the same after a restart', async () => {
    t = await startTestApp('sqlite', { ...lenient, NODE_ENV: 'development' });
    const sqlitePath = t.db.env.SQLITE_PATH;
    const token = await t.token({ subject: 'newcomer' });
    const subscribe = () =>
      t
        .http()
        .post('/webhooks')
        .set(bearer(token))
        .set('Idempotency-Key', 'first-try')
        .send({ url: 'http://127.0.0.1:9/hook', events: ['plant.created'] });
    const first = await subscribe();
    expect(first.status).toBe(201);
    expect(readFileSync(`${sqlitePath}.webhook-secret-key`, 'utf8')).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);

    await t.close();
    t = await startTestApp('sqlite', { ...lenient, ...t.db.env, NODE_ENV: 'development' });
    const replay = await subscribe();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
  });

  it('are still off in production', async () => {
    t = await startTestApp('sqlite', { ...lenient, NODE_ENV: 'production' });
    const token = await t.token({ subject: 'operator' });
    expectErrorBody(await t.http().get('/webhooks').set(bearer(token)), 503);
  });
});

/** With WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE off, as in production. */
describe.each(testDatabases())('Webhook URL policy on %s', (database) => {
  let t: TestApp;
  let token: string;
  const key = WEBHOOK_TEST_ENV.WEBHOOK_SECRET_KEY;

  beforeAll(async () => {
    // Its dispatcher looks for due deliveries only at start: the send-time test delivers through its own app.
    t = await startTestApp(database, { WEBHOOK_SECRET_KEY: key, WEBHOOK_POLL_INTERVAL_MS: '60000' });
    await t.reset();
    token = await t.token({ subject: 'policed' });
  });
  afterAll(() => t.close());

  const subscribe = (url: string) =>
    t
      .http()
      .post('/webhooks')
      .set(bearer(token))
      .send({ url, events: ['plant.created'] });

  it.each([
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://127.8.9.10/hook', 'loopback'],
    ['https://localhost/hook', 'loopback'],
    ['https://10.1.2.3/hook', 'private'],
    ['https://172.16.0.1/hook', 'private'],
    ['https://192.168.1.1/hook', 'private'],
    ['https://169.254.10.10/hook', 'link-local'],
    ['https://169.254.169.254/latest/meta-data', 'metadata'],
    ['https://100.64.0.1/hook', 'CGNAT'],
    ['https://0.0.0.0/hook', 'unspecified'],
    ['https://[::1]/hook', 'loopback'],
    ['https://[fc00::1]/hook', 'private'],
    ['https://[fd00:ec2::254]/hook', 'metadata'],
    ['https://[fe80::1]/hook', 'link-local'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['https://[::ffff:10.0.0.1]/hook', 'private'],
  ])('refuses %s (%s) with 400', async (url, range) => {
    const res = await subscribe(url);
    expectErrorBody(res, 400);
    expect(res.body.message).toMatch(new RegExp(`a[n]? ${range} address`, 'i'));
  });

  it('refuses http', async () => {
    const res = await subscribe('http://hooks.example.com/x');
    expectErrorBody(res, 400);
    expect(res.body.message).toBe('url must use https');
  });

  it('accepts an https URL of a public address (nothing is sent until an event)', async () => {
    expect((await subscribe('https://93.184.215.14/hook')).status).toBe(201);
  });

  it('checks again before sending: an address allowed when subscribing is refused at send time, and not contacted', async () => {
    const receiver = await new WebhookReceiver().start();
    // Subscribed where private addresses were allowed (say, before the operator closed them).
    const open = await startTestApp(database, { ...t.db.env, ...WEBHOOK_TEST_ENV, WEBHOOK_POLL_INTERVAL_MS: '60000' });
    let id: bigint;
    try {
      const res = await open
        .http()
        .post('/webhooks')
        .set(bearer(token))
        .send({ url: receiver.url('/internal'), events: ['plant.created'] });
      expect(res.status).toBe(201);
      id = exactJson<{ id: bigint }>(res).id;
    } finally {
      await open.close();
    }
    // Delivered where http is allowed and private addresses are not: the address check alone refuses it.
    const closed = await startTestApp(database, {
      ...t.db.env,
      WEBHOOK_SECRET_KEY: key,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    });
    try {
      const created = await closed
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send('{"id":1,"name":"x"}');
      expect(created.status).toBe(200);
      let attempts: { error?: string; statusCode?: number }[] = [];
      await waitFor(
        async () => {
          attempts = (await closed.http().get(`/webhooks/${id}/deliveries`).set(bearer(token))).body;
          return attempts.length > 0;
        },
        { what: 'an attempt' },
      );
      expect(attempts[0].error).toMatch(/^url resolves to 127\.0\.0\.1, a loopback address/);
      expect(attempts[0].statusCode).toBeUndefined();
      expect(receiver.deliveries).toEqual([]);
    } finally {
      await closed.close();
    }
    await receiver.close();
  });
});
