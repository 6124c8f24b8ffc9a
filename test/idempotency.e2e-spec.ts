import dns from 'node:dns';
import { Server } from 'node:http';
import type { Response } from 'supertest';
import { QueryFailedError } from 'typeorm';
import { IdempotencyService } from '../src/idempotency/idempotency.service';
import { requestFingerprint } from '../src/idempotency/idempotency-key';
import { PlantsRepository } from '../src/plants/plants.repository';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from '../src/webhooks/webhooks.limits';
import { PlantAlreadyExists } from '../src/plants/plants.errors';
import { expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, exactJson, expectErrorBody, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

/** Of concurrent duplicates exactly one is processed; the others are its replay or 409 in progress. */
async function expectOneCreate(requests: Promise<Response>[], plantCount: () => Promise<number>): Promise<void> {
  const answers = await Promise.all(requests);
  const processed = answers.filter((res) => res.status === 200 && !res.headers['idempotent-replayed']);
  const replayed = answers.filter((res) => res.status === 200 && res.headers['idempotent-replayed'] === 'true');
  const inFlight = answers.filter((res) => res.status === 409);
  expect(processed).toHaveLength(1);
  expect(processed.length + replayed.length + inFlight.length).toBe(answers.length);
  for (const res of inFlight) expect(res.body.message).toMatch(/still in progress/);
  for (const res of replayed) expect(res.text).toBe(processed[0].text);
  await expect(plantCount()).resolves.toBe(1);
}

/**
 * Idempotency-Key on the creating POSTs, end to end on a real database: what a client that retries
 * sees, and that a plant is never created twice, whichever instance answers.
 */
describe.each(testDatabases())('Idempotency-Key on %s', (database) => {
  let t: TestApp;
  let token: string;
  let other: string;

  beforeAll(async () => {
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'retrier' });
    other = await t.token({ subject: 'someone-else' });
  });

  const post = (app: TestApp, key: string | undefined, body: string, as = token) => {
    const req = app.http().post('/plants').set(bearer(as)).set('Content-Type', 'application/json');
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const plantCount = async (owner = 'retrier') =>
    Number(
      ((await t.dataSource.query('SELECT COUNT(*) AS n FROM plants WHERE owner = ?', [owner])) as { n: unknown }[])[0]
        .n,
    );
  const keyRows = async () =>
    (await t.dataSource.query('SELECT owner, idem_key, status_code, response FROM idempotency_keys')) as {
      owner: string;
      idem_key: string;
      status_code: unknown;
      response: string | null;
    }[];

  it('replays the answer to a repeat: same status and body, Idempotent-Replayed, one plant', async () => {
    const first = await post(t, 'k-1', '{"id":9223372036854775807,"name":"Fern","tag":"green"}');
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same request, laid out differently.
    const again = await post(t, 'k-1', '{ "tag": "green", "name": "Fern", "id": 9223372036854775807 }');
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(exactJson(again)).toEqual(expectedPlant({ id: 9223372036854775807n, name: 'Fern', tag: 'green' }));
    await expect(plantCount()).resolves.toBe(1);
  });

  it('replays a final client error too: a 409 duplicate stays that 409, even once the plant is gone', async () => {
    expect((await post(t, undefined, '{"id":5,"name":"Fern"}')).status).toBe(200);
    const first = await post(t, 'dup', '{"id":5,"name":"Fern"}');
    expectErrorBody(first, 409);
    expect(first.body.message).toBe(new PlantAlreadyExists(5n).message);
    expect((await t.http().delete('/plants/5').set(bearer(token))).status).toBe(204);
    const again = await post(t, 'dup', '{"id":5,"name":"Fern"}');
    expectErrorBody(again, 409);
    expect(again.body.message).toBe(first.body.message);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses an invalid body again the same way, holding nothing: the key then serves a valid request', async () => {
    const first = await post(t, 'bad', '{"id":1}');
    expectErrorBody(first, 400);
    const again = await post(t, 'bad', '{"id":1}');
    expectErrorBody(again, 400);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const valid = await post(t, 'bad', '{"id":1,"name":"Fixed"}');
    expect(valid.status).toBe(200);
  });

  it('replays, not 409s, the retry of a request whose connection was cut after the plant was committed', async () => {
    const idempotency = t.app.get(IdempotencyService);
    const succeed = idempotency.succeed.bind(idempotency);
    const spy = jest.spyOn(idempotency, 'succeed').mockImplementationOnce(async (...args) => {
      const created = await succeed(...args);
      // The plant and its answer are committed; the answer never reaches the client.
      (t.app.getHttpServer() as Server).closeAllConnections();
      return created;
    });
    try {
      await expect(post(t, 'cut', '{"id":7,"name":"Fern"}')).rejects.toThrow(/socket hang up|ECONNRESET/);
    } finally {
      spy.mockRestore();
    }
    await expect(plantCount()).resolves.toBe(1);
    const retry = await post(t, 'cut', '{"id":7,"name":"Fern"}');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(expectedPlant({ id: 7, name: 'Fern' }));
  });

  it('does not keep a 5xx: the key is released and the retry runs again', async () => {
    const repository = t.app.get(PlantsRepository);
    // The connection lost once the INSERT was sent: whether it committed is unknown, so it is not run again.
    const lost = Object.assign(new Error('lost'), { code: 'PROTOCOL_CONNECTION_LOST' });
    const spy = jest.spyOn(repository, 'insert').mockRejectedValueOnce(new QueryFailedError('INSERT', [], lost));
    try {
      expectErrorBody(await post(t, 'flaky', '{"id":8,"name":"Fern"}'), 503);
    } finally {
      spy.mockRestore();
    }
    await expect(keyRows()).resolves.toEqual([]);
    const retry = await post(t, 'flaky', '{"id":8,"name":"Fern"}');
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses the same key with a different request with 422, and creates nothing', async () => {
    expect((await post(t, 'k-2', '{"id":1,"name":"Fern"}')).status).toBe(200);
    const res = await post(t, 'k-2', '{"id":2,"name":"Fern"}');
    expectErrorBody(res, 422);
    expect(res.body.message).toMatch(/already used for a different request/);
    await expect(plantCount()).resolves.toBe(1);
  });

  it('keeps each owner their own keys', async () => {
    expect((await post(t, 'shared', '{"id":1,"name":"Mine"}')).status).toBe(200);
    const theirs = await post(t, 'shared', '{"id":1,"name":"Theirs"}', other);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body).toEqual(expectedPlant({ id: 1, name: 'Theirs' }));
    await expect(plantCount('someone-else')).resolves.toBe(1);
  });

  it.each([
    ['empty', ''],
    ['with a space', 'a b'],
    ['too long', 'k'.repeat(256)],
  ])('refuses a key %s with 400', async (_name, key) => {
    const res = await post(t, key, '{"id":1,"name":"Fern"}');
    expectErrorBody(res, 400);
    expect(res.body.message).toMatch(/Idempotency-Key must be/);
    await expect(plantCount()).resolves.toBe(0);
  });

  it('answers 409 while the key is held, and lets the next request take over a key whose holder died', async () => {
    const body = '{"id":3,"name":"Fern"}';
    const fingerprint = requestFingerprint('POST', '/plants', { id: 3n, name: 'Fern' });
    // What an instance that died mid-request leaves behind: the key taken, no answer, a lease running.
    await t.dataSource.query(
      'INSERT INTO idempotency_keys (owner, idem_key, fingerprint, claim, lease_until, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      ['retrier', 'orphan', fingerprint, 'dead-instance', Date.now() + 600_000, Date.now() + 600_000],
    );
    const held = await post(t, 'orphan', body);
    expectErrorBody(held, 409);
    expect(held.body.message).toMatch(/still in progress/);
    await t.dataSource.query('UPDATE idempotency_keys SET lease_until = 0');
    const taken = await post(t, 'orphan', body);
    expect(taken.status).toBe(200);
    expect(taken.headers['idempotent-replayed']).toBeUndefined();
    expect((await post(t, 'orphan', body)).headers['idempotent-replayed']).toBe('true');
  });

  it('processes concurrent duplicates once: never two plants', async () => {
    await expectOneCreate(
      Array.from({ length: 8 }, () => post(t, 'raced', '{"id":11,"name":"Raced"}')),
      plantCount,
    );
  });

  describe('DELETE /plants/{id}', () => {
    const remove = (id: bigint | number, key: string) =>
      t.http().delete(`/plants/${id}`).set(bearer(token)).set('Idempotency-Key', key);

    it('deletes once and replays the 204; a repeat after the plant is gone is still that 204', async () => {
      expect((await post(t, undefined, '{"id":41,"name":"Fern"}')).status).toBe(200);
      const first = await remove(41, 'delete-41');
      expect(first.status).toBe(204);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const repeat = await remove(41, 'delete-41');
      expect(repeat.status).toBe(204);
      expect(repeat.headers['idempotent-replayed']).toBe('true');
      expect(repeat.text).toBe('');
      // Without the key, the same delete finds nothing now.
      expect((await t.http().delete('/plants/41').set(bearer(token))).status).toBe(404);
    });

    it('refuses one key on another id with 422: the path is part of the request, and the other plant stays', async () => {
      for (const id of [42, 43]) expect((await post(t, undefined, `{"id":${id},"name":"Fern"}`)).status).toBe(200);
      expect((await remove(42, 'one-key')).status).toBe(204);
      const other = await remove(43, 'one-key');
      expectErrorBody(other, 422);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      await expect(plantCount()).resolves.toBe(1);
    });

    it('answers 404 for a plant that is not there, also for an owner whose changes have subscribers, and records no event', async () => {
      const subscribed = await t
        .http()
        .post('/webhooks')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send('{"url":"http://127.0.0.1:9/hooks","events":["plant.deleted"]}');
      expect(subscribed.status).toBe(201);
      const missing = await remove(404, 'delete-missing');
      expectErrorBody(missing, 404);
      const repeat = await remove(404, 'delete-missing');
      expectErrorBody(repeat, 404);
      expect(repeat.headers['idempotent-replayed']).toBe('true');
      const deliveries = (await t.dataSource.query('SELECT COUNT(*) AS n FROM webhook_deliveries')) as { n: unknown }[];
      expect(Number(deliveries[0].n)).toBe(0);
    });
  });

  describe('POST /webhooks', () => {
    const subscribe = (key: string, as = token) =>
      t
        .http()
        .post('/webhooks')
        .set(bearer(as))
        .set('Idempotency-Key', key)
        .send({ url: 'http://127.0.0.1:9/hook', events: ['plant.created'] });

    it('replays the same subscription and secret to its owner only, and stores the secret sealed', async () => {
      const first = await subscribe('hook-1');
      expect(first.status).toBe(201);
      const created = exactJson<{ id: bigint; secret: string }>(first);
      const again = await subscribe('hook-1');
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      const listed = await t.http().get('/webhooks').set(bearer(token));
      expect(listed.body).toHaveLength(1);

      const rows = await keyRows();
      expect(rows).toHaveLength(1);
      expect(rows[0].response).not.toContain(created.secret);
      expect(rows[0].response).not.toContain(created.secret.slice('whsec_'.length, 20));

      const theirs = await subscribe('hook-1', other);
      expect(theirs.status).toBe(201);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(exactJson<{ secret: string }>(theirs).secret).not.toBe(created.secret);
    });

    const subscribeTo = (key: string, url: string) =>
      t
        .http()
        .post('/webhooks')
        .set(bearer(token))
        .set('Idempotency-Key', key)
        .send({ url, events: ['plant.created'] });

    it('keeps no refusal about the moment: a retry after a failed host lookup runs again and subscribes', async () => {
      const url = 'http://hooks.example.test:9/hook';
      const unresolved = Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.example.test'), { code: 'EAI_AGAIN' });
      const lookup = jest
        .spyOn(dns.promises, 'lookup')
        .mockRejectedValueOnce(unresolved)
        .mockResolvedValue([{ address: '127.0.0.1', family: 4 }] as never);
      try {
        const refused = await subscribeTo('dns-flap', url);
        expectErrorBody(refused, 400);
        expect(refused.body.message).toBe('url host hooks.example.test does not resolve');
        await expect(keyRows()).resolves.toEqual([]);

        const retry = await subscribeTo('dns-flap', url);
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBeUndefined();
        const replay = await subscribeTo('dns-flap', url);
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(retry.text);
      } finally {
        lookup.mockRestore();
      }
      expect((await t.http().get('/webhooks').set(bearer(token))).body).toHaveLength(1);
    });

    it('keeps a final refusal: a URL the policy refuses, and the 11th subscription, are replayed', async () => {
      const refused = await subscribeTo('bad-url', 'http://user:pw@127.0.0.1:9/hook');
      expectErrorBody(refused, 400);
      expect(refused.body.message).toBe('url must not contain a username or password');
      const again = await subscribeTo('bad-url', 'http://user:pw@127.0.0.1:9/hook');
      expectErrorBody(again, 400);
      expect(again.headers['idempotent-replayed']).toBe('true');

      for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_OWNER; i++) {
        expect((await subscribeTo(`fill-${i}`, `http://127.0.0.1:9/hook-${i}`)).status).toBe(201);
      }
      const full = await subscribeTo('one-too-many', 'http://127.0.0.1:9/hook-more');
      expectErrorBody(full, 409);
      await t.dataSource.query('DELETE FROM webhook_subscriptions');
      const replayed = await subscribeTo('one-too-many', 'http://127.0.0.1:9/hook-more');
      expectErrorBody(replayed, 409);
      expect(replayed.body).toEqual(full.body);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
    });
  });
});

describe.each(testDatabases())('Idempotency-Key expiry on %s', (database) => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database, { IDEMPOTENCY_TTL: '1s' });
    await t.reset();
    token = await t.token({ subject: 'forgetful' });
  });
  afterAll(() => t.close());

  const post = (body: string) =>
    t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .set('Idempotency-Key', 'short-lived')
      .send(body);

  it('forgets a key after IDEMPOTENCY_TTL: it is new again, and the purge deletes what expired', async () => {
    expect((await post('{"id":1,"name":"First"}')).status).toBe(200);
    expectErrorBody(await post('{"id":2,"name":"Second"}'), 422);
    // Polled, not slept: the key is new again once the database's clock has passed its expiry.
    let res = await post('{"id":2,"name":"Second"}');
    await waitFor(
      async () => {
        if (res.status !== 422) return true;
        res = await post('{"id":2,"name":"Second"}');
        return false;
      },
      { timeoutMs: 5000, intervalMs: 100, what: 'the key to expire' },
    );
    expect(res.status).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();

    await waitFor(async () => (await t.app.get(IdempotencyService).purge()) === 1, {
      timeoutMs: 5000,
      intervalMs: 100,
      what: 'the purge of the expired key',
    });
    await expect(t.dataSource.query('SELECT idem_key FROM idempotency_keys')).resolves.toEqual([]);
  });
});

/** Instances of one deployment share the keys through the database (MySQL: a SQLite file is one process's). */
(testDatabases().includes('mysql') ? describe : describe.skip)('Idempotency-Key through two instances', () => {
  let a: TestApp;
  let b: TestApp;
  let token: string;

  beforeAll(async () => {
    a = await startTestApp('mysql');
    b = await startTestApp('mysql', { ...a.db.env });
    await a.reset();
    token = await a.token({ subject: 'two-instances' });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('processes concurrent duplicates sent to both once, and either replays the answer', async () => {
    const post = (app: TestApp) =>
      app
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', 'raced')
        .send('{"id":11,"name":"Raced"}');
    const count = async () =>
      Number(
        (
          (await a.dataSource.query("SELECT COUNT(*) AS n FROM plants WHERE owner = 'two-instances'")) as {
            n: unknown;
          }[]
        )[0].n,
      );
    await expectOneCreate(
      Array.from({ length: 8 }, (_, i) => post(i % 2 === 0 ? a : b)),
      count,
    );
    for (const app of [a, b]) expect((await post(app)).headers['idempotent-replayed']).toBe('true');
  });
});
