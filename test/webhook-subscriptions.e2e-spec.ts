import { Webhook } from 'standardwebhooks';
import { WEBHOOK_TEST_EVENT } from '../src/webhooks/events/events';
import { DISABLED_BY_ITS_USER } from '../src/webhooks/subscriptions/subscriptions.repository';
import { anyDateTime, expectedEvent, expectedWebhook } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, exactJson, expectErrorBody, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { ReceivedDelivery, WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

jest.setTimeout(60_000);

const BOTH = ['plant.created', 'plant.deleted'];

interface Created {
  id: bigint;
  secret: string;
}

interface EventBody {
  id: string;
  type: string;
  timestamp: string;
  data: { id: bigint; name?: string };
}

/**
 * What a subscriber does with a subscription over the years (docs/webhooks.md): change it, disable
 * and re-enable it, rotate its secret, test its endpoint, resend and recover deliveries, and read
 * its events back.
 */
describe.each(testDatabases())('Webhook subscriptions over time on %s', (database) => {
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
    token = await t.token({ subject: 'subscriber' });
  });

  const subscribe = async (path: string, events = ['plant.created', 'plant.deleted'], as = token) => {
    const res = await t
      .http()
      .post('/webhooks')
      .set(bearer(as))
      .send({ url: receiver.url(path), events });
    expect({ status: res.status, text: res.status === 201 ? '' : res.text }).toEqual({ status: 201, text: '' });
    const body = exactJson<Created>(res);
    receiver.expectSecret(path, body.secret);
    return body;
  };
  const patch = (id: bigint, body: string, contentType = 'application/merge-patch+json', as = token) =>
    t.http().patch(`/webhooks/${id}`).set(bearer(as)).set('Content-Type', contentType).send(body);
  const createPlant = async (id: number, as = token) => {
    const res = await t
      .http()
      .post('/plants')
      .set(bearer(as))
      .set('Content-Type', 'application/json')
      .send(`{"id":${id},"name":"Plant ${id}"}`);
    expect(res.status).toBe(200);
  };
  const listed = async () => exactJson<Record<string, unknown>[]>(await t.http().get('/webhooks').set(bearer(token)));
  const events = async (query = '') => {
    const res = await t.http().get(`/events${query}`).set(bearer(token));
    expect(res.status).toBe(200);
    return { events: exactJson<EventBody[]>(res), link: res.headers.link as string | undefined };
  };
  const states = async () =>
    ((await t.dataSource.query('SELECT state FROM webhook_deliveries ORDER BY id')) as { state: string }[]).map(
      (row) => row.state,
    );
  const plantIds = (deliveries: ReceivedDelivery[]) =>
    deliveries.map((delivery) => Number(JSON.parse(delivery.body).data.id as number));

  describe('PATCH /webhooks/{id}', () => {
    it('changes the URL, the events and the description, and what it leaves out stays', async () => {
      const { id, secret } = await subscribe('/before', ['plant.created']);
      receiver.expectSecret('/after', secret);
      const res = await patch(
        id,
        JSON.stringify({
          url: receiver.url('/after'),
          events: ['plant.deleted', 'plant.deleted'],
          description: 'Sync',
        }),
      );
      expect(res.status).toBe(200);
      expect(exactJson(res)).toEqual(
        expectedWebhook({ id, url: receiver.url('/after'), events: ['plant.deleted'], description: 'Sync' }),
      );
      await createPlant(1);
      expect((await t.http().delete('/plants/1').set(bearer(token))).status).toBe(204);
      await waitFor(() => receiver.at('/after').length === 1, { what: 'the delete delivered to the new URL' });
      expect(receiver.at('/before')).toEqual([]);
      expect(receiver.at('/after')[0].verified.ok).toBe(true);
      expect(JSON.parse(receiver.at('/after')[0].body).type).toBe('plant.deleted');
      // application/json too; null removes the description, the rest stays.
      const cleared = await patch(id, '{"description":null}', 'application/json');
      expect(cleared.status).toBe(200);
      expect(exactJson<Record<string, unknown>>(cleared)).not.toHaveProperty('description');
      expect(await listed()).toEqual([exactJson(cleared)]);
    });

    it.each([
      ['{"url":null}', /url must be a string/],
      ['{"events":[]}', /events must contain at least 1 elements/],
      ['{"enabled":"yes"}', /enabled must be a boolean/],
      ['{"description":""}', /description must be from 1 to 255 characters long/],
      ['{"secret":"whsec_mine"}', /property secret should not exist/],
      ['{"url":"ftp://example.com/hook"}', /url must use http/],
      ['{"url":"https://nothing.invalid/hook"}', /url host nothing\.invalid does not resolve/],
    ])('refuses %s with 400, changing nothing', async (body, message) => {
      const { id } = await subscribe('/kept', ['plant.created']);
      const res = await patch(id, body);
      expectErrorBody(res, 400);
      expect(res.body.message).toMatch(message);
      expect(await listed()).toEqual([expectedWebhook({ id, url: receiver.url('/kept'), events: ['plant.created'] })]);
    });

    it("answers 404 for another user's subscription, and changes nothing of it", async () => {
      const { id } = await subscribe('/mine');
      const other = await t.token({ subject: 'intruder' });
      expectErrorBody(await patch(id, '{"enabled":false}', 'application/json', other), 404);
      expect(await listed()).toEqual([expectedWebhook({ id, url: receiver.url('/mine'), events: BOTH })]);
    });

    it('disables a subscription, holding what it would receive, and re-enables it', async () => {
      const { id } = await subscribe('/paused', ['plant.created']);
      const disabled = await patch(id, '{"enabled":false}');
      const paused = { id, url: receiver.url('/paused'), events: ['plant.created'] };
      expect(exactJson(disabled)).toEqual(
        expectedWebhook({ ...paused, enabled: false, disabledAt: anyDateTime, disabledReason: DISABLED_BY_ITS_USER }),
      );
      await createPlant(1);
      expect(await states()).toEqual(['held']);
      const enabled = await patch(id, '{"enabled":true}');
      expect(exactJson(enabled)).toEqual(expectedWebhook(paused));
      await createPlant(2);
      await waitFor(async () => (await states())[1] === 'delivered', { what: 'the event after re-enabling delivered' });
      // What was held is sent only if recovered.
      expect(plantIds(receiver.at('/paused'))).toEqual([2]);
      expect(await states()).toEqual(['held', 'delivered']);
    });

    it('re-enables a subscription its endpoint disabled with 410, its failure clock stopped', async () => {
      receiver.answer('/gone', 410, 204);
      const { id } = await subscribe('/gone', ['plant.created']);
      await createPlant(1);
      await waitFor(async () => (await listed())[0].enabled === false, { what: 'the subscription disabled' });
      await createPlant(2);
      expect(await states()).toEqual(['failed', 'held']);
      expect((await patch(id, '{"enabled":true}')).status).toBe(200);
      const [row] = (await t.dataSource.query('SELECT failing_since, disabled_reason FROM webhook_subscriptions')) as {
        failing_since: unknown;
        disabled_reason: unknown;
      }[];
      expect(row).toEqual({ failing_since: null, disabled_reason: null });
      await createPlant(3);
      await waitFor(() => receiver.at('/gone').length === 2, { what: 'the next event delivered' });
      expect(plantIds(receiver.at('/gone'))).toEqual([1, 3]);
    });
  });

  describe('POST /webhooks/{id}/rotate-secret', () => {
    it('signs with both secrets during the grace period, so a receiver switching secrets never rejects a delivery', async () => {
      const { id, secret: oldSecret } = await subscribe('/rotating', ['plant.created']);
      const receiverSecrets = { now: oldSecret };
      const rejected: string[] = [];
      let verified = 0;
      /** A receiver verifying with the secret it has configured at the moment, as a Standard Webhooks library does. */
      const verifyAll = () => {
        for (const delivery of receiver.at('/rotating').slice(verified)) {
          verified += 1;
          try {
            new Webhook(receiverSecrets.now).verify(delivery.body, delivery.headers as Record<string, string>);
          } catch (error) {
            rejected.push(`${delivery.headers['webhook-id']}: ${(error as Error).message}`);
          }
        }
      };
      await createPlant(1);
      await waitFor(() => receiver.at('/rotating').length === 1);
      verifyAll();

      const rotated = await t
        .http()
        .post(`/webhooks/${id}/rotate-secret`)
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send('{"gracePeriodSeconds":3}');
      expect(rotated.status).toBe(200);
      const { secret: newSecret, previousSecretExpiresAt } = exactJson<{
        secret: string;
        previousSecretExpiresAt: string;
      }>(rotated);
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(oldSecret);
      expect(Date.parse(previousSecretExpiresAt)).toBeGreaterThan(Date.now());
      const rotating = { id, url: receiver.url('/rotating'), events: ['plant.created'] };
      expect(await listed()).toEqual([expectedWebhook({ ...rotating, previousSecretExpiresAt })]);
      expect((await t.http().get('/webhooks').set(bearer(token))).text).not.toContain('whsec_');

      // During the grace period: two signatures, each secret verifies alone.
      await createPlant(2);
      await waitFor(() => receiver.at('/rotating').length === 2);
      const during = receiver.at('/rotating')[1];
      expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
      for (const secret of [oldSecret, newSecret]) {
        expect(() => new Webhook(secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();
      }
      verifyAll();
      // The receiver rolls the new secret out while both sign.
      receiverSecrets.now = newSecret;
      await createPlant(3);
      await waitFor(() => receiver.at('/rotating').length === 3);
      verifyAll();

      // After it, the new secret alone.
      await waitFor(() => Date.now() > Date.parse(previousSecretExpiresAt) + 100, { timeoutMs: 10_000 });
      await createPlant(4);
      await waitFor(() => receiver.at('/rotating').length === 4);
      const after = receiver.at('/rotating')[3];
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => new Webhook(oldSecret).verify(after.body, after.headers as Record<string, string>)).toThrow();
      verifyAll();
      expect(verified).toBe(4);
      expect(rejected).toEqual([]);
      expect(await listed()).toEqual([expectedWebhook(rotating)]);
    });

    it('gives a grace of 24 hours without a body, none with 0, and refuses one past 7 days', async () => {
      const { id, secret } = await subscribe('/graceful', ['plant.created']);
      const rotate = (body?: string) => {
        const req = t.http().post(`/webhooks/${id}/rotate-secret`).set(bearer(token));
        return body === undefined ? req : req.set('Content-Type', 'application/json').send(body);
      };
      const first = await rotate();
      expect(first.status).toBe(200);
      const expires = Date.parse(exactJson<{ previousSecretExpiresAt: string }>(first).previousSecretExpiresAt);
      expect(expires - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
      expect(expires - Date.now()).toBeLessThanOrEqual(86_400_000 + 60_000);
      const second = await rotate('{"gracePeriodSeconds":0}');
      expect(exactJson<Record<string, unknown>>(second)).not.toHaveProperty('previousSecretExpiresAt');
      const current = exactJson<{ secret: string }>(second).secret;
      receiver.expectSecret('/graceful', current);
      await createPlant(1);
      await waitFor(() => receiver.at('/graceful').length === 1);
      const [delivery] = receiver.at('/graceful');
      expect(delivery.verified.ok).toBe(true);
      expect(() => new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).toThrow();
      for (const body of ['{"gracePeriodSeconds":604801}', '{"gracePeriodSeconds":-1}', '{"gracePeriodSeconds":1.5}']) {
        const res = await rotate(body);
        expectErrorBody(res, 400);
        expect(res.body.message).toBe('gracePeriodSeconds must be an integer from 0 to 604800');
      }
      expectErrorBody(await t.http().post('/webhooks/42/rotate-secret').set(bearer(token)), 404);
    });

    it('replays a rotation to a retry with its Idempotency-Key: the same new secret, stored sealed', async () => {
      const { id } = await subscribe('/replayed', ['plant.created']);
      const rotate = () =>
        t.http().post(`/webhooks/${id}/rotate-secret`).set(bearer(token)).set('Idempotency-Key', 'rotate-once');
      const first = await rotate();
      const again = await rotate();
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      const { secret } = exactJson<{ secret: string }>(first);
      const stored = (await t.dataSource.query('SELECT response FROM idempotency_keys')) as { response: string }[];
      expect(stored[0].response).not.toContain(secret.slice('whsec_'.length));
    });
  });

  describe('POST /webhooks/{id}/test', () => {
    it('sends a signed webhook.test event now, says how the endpoint took it, and records nothing', async () => {
      const { id } = await subscribe('/tested', ['plant.created']);
      const res = await t.http().post(`/webhooks/${id}/test`).set(bearer(token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        eventId: expect.stringMatching(/^test_[0-9a-f]{32}$/),
        delivered: true,
        statusCode: 204,
        attemptedAt: expect.any(String),
        durationMs: expect.any(Number),
      });
      const [sent] = receiver.at('/tested');
      expect(sent.verified.ok).toBe(true);
      expect(sent.headers['webhook-id']).toBe(res.body.eventId);
      expect(JSON.parse(sent.body)).toMatchObject({ type: WEBHOOK_TEST_EVENT, data: { message: expect.any(String) } });
      expect((await events()).events).toEqual([]);
      expect((await t.http().get(`/webhooks/${id}/deliveries`).set(bearer(token))).body).toEqual([]);
      await expect(t.dataSource.query('SELECT id FROM webhook_deliveries')).resolves.toEqual([]);
    });

    it('reports a failing, a silent and a refused endpoint, without disabling the subscription', async () => {
      receiver.answer('/broken', 410);
      const { id } = await subscribe('/broken');
      await expect(t.http().post(`/webhooks/${id}/test`).set(bearer(token))).resolves.toMatchObject({
        status: 200,
        body: { delivered: false, statusCode: 410 },
      });
      expect(await listed()).toMatchObject([{ enabled: true }]);
      receiver.answer('/broken', 'hang');
      const hung = await t.http().post(`/webhooks/${id}/test`).set(bearer(token));
      expect(hung.body).toMatchObject({ delivered: false, error: 'timeout after 1000 ms' });
      expect(hung.body).not.toHaveProperty('statusCode');
    });

    it('tests a disabled subscription too, and one test of a subscription at a time', async () => {
      receiver.answer('/slow-test', 'hang');
      const { id } = await subscribe('/slow-test');
      expect((await patch(id, '{"enabled":false}')).status).toBe(200);
      const first = t
        .http()
        .post(`/webhooks/${id}/test`)
        .set(bearer(token))
        .then((res) => res);
      await waitFor(() => receiver.at('/slow-test').length === 1, { what: 'the first test sent' });
      const second = await t.http().post(`/webhooks/${id}/test`).set(bearer(token));
      expectErrorBody(second, 409);
      expect(second.body.message).toMatch(/already running/);
      receiver.release('/slow-test', 202);
      expect((await first).body).toMatchObject({ delivered: true, statusCode: 202 });
    });
  });

  describe('resend and recover', () => {
    it('resends a delivered event with the same webhook-id, and refuses what it cannot resend', async () => {
      const { id } = await subscribe('/again', ['plant.created']);
      await createPlant(1);
      await waitFor(() => receiver.at('/again').length === 1);
      const [first] = receiver.at('/again');
      const eventId = String(first.headers['webhook-id']);
      await waitFor(async () => (await states())[0] === 'delivered', { what: 'the first attempt recorded' });
      const res = await t.http().post(`/webhooks/${id}/deliveries/${eventId}/resend`).set(bearer(token));
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ eventId, type: 'plant.created' });
      await waitFor(() => receiver.at('/again').length === 2, { what: 'the resent delivery' });
      await waitFor(async () => (await states())[0] === 'delivered', { what: 'the resent attempt recorded' });
      const [, again] = receiver.at('/again');
      expect(again.headers['webhook-id']).toBe(eventId);
      expect(again.body).toBe(first.body);
      expect(again.verified.ok).toBe(true);
      const attempts = (await t.http().get(`/webhooks/${id}/deliveries`).set(bearer(token))).body as {
        eventId: string;
        attempt: number;
      }[];
      expect(attempts.map((attempt) => [attempt.eventId, attempt.attempt])).toEqual([
        [eventId, 2],
        [eventId, 1],
      ]);

      const resend = (event: string, subscription = id) =>
        t.http().post(`/webhooks/${subscription}/deliveries/${event}/resend`).set(bearer(token));
      expectErrorBody(await resend('evt_999999'), 404);
      expectErrorBody(await resend(eventId, 42n), 404);
      const invalid = await resend('plant-1');
      expectErrorBody(invalid, 400);
      expect(invalid.body.message).toMatch(/eventId must be a webhook-id/);
      expect((await patch(id, '{"enabled":false}')).status).toBe(200);
      const disabled = await resend(eventId);
      expectErrorBody(disabled, 409);
      expect(disabled.body.message).toMatch(/is disabled; re-enable it/);
    });

    it('recovers what was held while disabled and what failed for good, since a time, with their webhook-ids', async () => {
      receiver.answer('/recovered', 500);
      const { id } = await subscribe('/recovered', ['plant.created']);
      await createPlant(1);
      // Every attempt of the schedule fails: the event is failed for good.
      await waitFor(async () => (await states()).includes('failed'), { what: 'the first event failed' });
      const failedId = String(receiver.at('/recovered')[0].headers['webhook-id']);
      expect((await patch(id, '{"enabled":false}')).status).toBe(200);
      await createPlant(2);
      await createPlant(3);
      expect(await states()).toEqual(['failed', 'held', 'held']);
      expect((await patch(id, '{"enabled":true}')).status).toBe(200);
      receiver.answer('/recovered', 204);
      const before = receiver.at('/recovered').length;

      const since = new Date(Date.now() - 60_000).toISOString();
      const res = await t
        .http()
        .post(`/webhooks/${id}/recover`)
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send({ since });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ since });
      await waitFor(() => receiver.at('/recovered').length === before + 3, { what: 'three deliveries recovered' });
      await waitFor(async () => (await states()).every((state) => state === 'delivered'), { what: 'all delivered' });
      const recovered = receiver.at('/recovered').slice(before);
      expect(plantIds(recovered).sort()).toEqual([1, 2, 3]);
      expect(recovered.every((delivery) => delivery.verified.ok)).toBe(true);
      expect(recovered.find((delivery) => JSON.parse(delivery.body).data.id === 1)?.headers['webhook-id']).toBe(
        failedId,
      );
      // The feed has them with the ids they were sent with.
      expect((await events('?order=asc')).events.map((event) => event.id)).toEqual(
        [1, 2, 3].map((plant) =>
          String(recovered.find((delivery) => JSON.parse(delivery.body).data.id === plant)?.headers['webhook-id']),
        ),
      );
    });

    it('refuses a recovery from the future or from before the retention, and of a disabled subscription', async () => {
      const { id } = await subscribe('/unrecoverable');
      const recover = (since: string) =>
        t
          .http()
          .post(`/webhooks/${id}/recover`)
          .set(bearer(token))
          .set('Content-Type', 'application/json')
          .send({ since });
      for (const since of [
        new Date(Date.now() + 60_000).toISOString(),
        new Date(Date.now() - 8 * 86_400_000).toISOString(),
      ]) {
        const res = await recover(since);
        expectErrorBody(res, 400);
        expect(res.body.message).toMatch(/since must be within the last 7 days/);
      }
      const malformed = await recover('yesterday');
      expectErrorBody(malformed, 400);
      expect(malformed.body.message).toMatch(/since must be a date and time/);
      expect((await patch(id, '{"enabled":false}')).status).toBe(200);
      expectErrorBody(await recover(new Date().toISOString()), 409);
    });
  });

  describe('GET /events', () => {
    it("lists the user's events with the id, type, timestamp and data their webhooks carried", async () => {
      await subscribe('/first');
      await subscribe('/second', ['plant.created']);
      await createPlant(1);
      expect((await t.http().delete('/plants/1').set(bearer(token))).status).toBe(204);
      await waitFor(() => receiver.at('/first').length === 2 && receiver.at('/second').length === 1);
      const { events: newest } = await events();
      expect(newest.map((event) => event.type)).toEqual(['plant.deleted', 'plant.created']);
      // One id per event, the same for every subscription that received it.
      for (const path of ['/first', '/second']) {
        for (const delivery of receiver.at(path)) {
          const body = JSON.parse(delivery.body) as { type: string; timestamp: string };
          const event = newest.find((candidate) => candidate.id === delivery.headers['webhook-id']);
          expect(event).toMatchObject({ type: body.type, timestamp: body.timestamp });
          expect(delivery.body).toBe(
            `{"type":"${event!.type}","timestamp":"${event!.timestamp}","data":${JSON.stringify(event!.data, (_, value) => (typeof value === 'bigint' ? Number(value) : value))}}`,
          );
        }
      }
      expect(newest).toEqual([
        expectedEvent('plant.deleted', { id: 1n }),
        expectedEvent('plant.created', { id: 1n, name: 'Plant 1' }),
      ]);
      const other = await t.token({ subject: 'someone-else' });
      expect((await t.http().get('/events').set(bearer(other))).body).toEqual([]);
    });

    it('pages with Link either way, and filters by type and time', async () => {
      await subscribe('/paged');
      for (let id = 1; id <= 5; id++) await createPlant(id);
      expect((await t.http().delete('/plants/5').set(bearer(token))).status).toBe(204);
      const { events: all } = await events('?order=asc');
      expect(all.map((event) => [event.type, event.data.id])).toEqual([
        ['plant.created', 1n],
        ['plant.created', 2n],
        ['plant.created', 3n],
        ['plant.created', 4n],
        ['plant.created', 5n],
        ['plant.deleted', 5n],
      ]);
      const seen: string[] = [];
      let path: string | undefined = '/events?limit=4&type=plant.created';
      while (path !== undefined) {
        const res = await t.http().get(path).set(bearer(token));
        seen.push(...exactJson<EventBody[]>(res).map((event) => event.id));
        const next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''));
        path = next ? `/events${next[1]}` : undefined;
      }
      expect(seen).toEqual(
        all
          .slice(0, 5)
          .reverse()
          .map((event) => event.id),
      );
      const { events: window, link } = await events(
        `?order=asc&since=${encodeURIComponent(all[1].timestamp)}&until=${encodeURIComponent(new Date(Date.parse(all[5].timestamp) + 1).toISOString())}&limit=2`,
      );
      expect(window.map((event) => event.id)).toEqual(all.slice(1, 3).map((event) => event.id));
      expect(link).toMatch(/^<\?limit=2&order=asc&since=[^>]+&until=[^>]+&after=evt_\d+>; rel="next"$/);
      for (const query of ['?order=up', '?type=plant.updated', '?after=42', '?since=today', '?limit=0', '?owner=x']) {
        expectErrorBody(await t.http().get(`/events${query}`).set(bearer(token)), 400);
      }
    });

    it('needs the webhooks:manage scope', async () => {
      const plantsOnly = await t.token({ subject: 'subscriber', scopes: ['plants:read', 'plants:write'] });
      expectErrorBody(await t.http().get('/events').set(bearer(plantsOnly)), 403);
    });
  });

  describe('a delivery recorded by the previous release during the upgrade', () => {
    it('keeps its own webhook-id on every attempt and resend, and is not in the events feed', async () => {
      const { id } = await subscribe('/legacy', ['plant.created']);
      // As the previous release records a delivery: no event, the data on the delivery itself.
      await t.dataSource.query(
        'INSERT INTO webhook_deliveries (subscription_id, event_type, data, occurred_at, state, attempts, next_attempt_at) ' +
          'VALUES (?, \'plant.created\', \'{"id":7,"name":"Old"}\', ?, \'pending\', 0, 0)',
        [id, Date.now()],
      );
      const [row] = (await t.dataSource.query('SELECT id FROM webhook_deliveries')) as { id: unknown }[];
      const legacyId = `msg_${String(row.id)}`;
      await waitFor(() => receiver.at('/legacy').length === 1, { what: 'the delivery of the previous release' });
      expect(receiver.at('/legacy')[0].headers['webhook-id']).toBe(legacyId);
      await waitFor(async () => (await states())[0] === 'delivered', { what: 'its attempt recorded' });
      const resent = await t.http().post(`/webhooks/${id}/deliveries/${legacyId}/resend`).set(bearer(token));
      expect(resent.status).toBe(202);
      await waitFor(() => receiver.at('/legacy').length === 2, { what: 'the resent delivery' });
      await waitFor(async () => (await states())[0] === 'delivered', { what: 'the resent attempt recorded' });
      expect(receiver.at('/legacy').map((delivery) => delivery.headers['webhook-id'])).toEqual([legacyId, legacyId]);
      expect(
        ((await t.http().get(`/webhooks/${id}/deliveries`).set(bearer(token))).body as { eventId: string }[]).map(
          (a) => a.eventId,
        ),
      ).toEqual([legacyId, legacyId]);
      expect((await events()).events).toEqual([]);
      // An event id of the same number names no delivery of it.
      expectErrorBody(
        await t
          .http()
          .post(`/webhooks/${id}/deliveries/evt_${String(row.id)}/resend`)
          .set(bearer(token)),
        404,
      );
    });
  });
});

/** A test goes through the address policy as a delivery does. */
describe.each(testDatabases())('Testing an endpoint the address policy now refuses, on %s', (database) => {
  it('reports the refusal, and sends nothing', async () => {
    const receiver = await new WebhookReceiver().start();
    // Subscribed where private addresses were allowed (say, before the operator closed them).
    const open = await startTestApp(database, { ...WEBHOOK_TEST_ENV, WEBHOOK_POLL_INTERVAL_MS: '60000' });
    await open.reset();
    const token = await open.token({ subject: 'tester' });
    const created = await open
      .http()
      .post('/webhooks')
      .set(bearer(token))
      .send({ url: receiver.url('/internal'), events: ['plant.created'] });
    await open.close();
    const policed = await startTestApp(database, {
      ...open.db.env,
      WEBHOOK_SECRET_KEY: WEBHOOK_TEST_ENV.WEBHOOK_SECRET_KEY,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '60000',
    });
    try {
      const refused = await policed
        .http()
        .post(`/webhooks/${exactJson<Created>(created).id}/test`)
        .set(bearer(token));
      expect(refused.status).toBe(200);
      expect(refused.body).toMatchObject({ delivered: false, error: 'url resolves to 127.0.0.1, a loopback address' });
      expect(receiver.deliveries).toEqual([]);
    } finally {
      await policed.close();
      await receiver.close();
    }
  });
});

/**
 * One subscriber's endpoint that never answers, with a backlog, holds no more than its share of the
 * slots: another subscriber's events keep going out within a poll or two.
 */
describe.each(testDatabases())('Fair delivery across subscribers on %s', (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp(database, {
      ...WEBHOOK_TEST_ENV,
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: '2',
      WEBHOOK_OWNER_CONCURRENCY: '3',
      WEBHOOK_TIMEOUT_MS: '5000',
    });
    await t.reset();
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it("delivers a healthy subscriber's events while a tarpit holds only its share of the slots", async () => {
    const subscribe = async (as: string, path: string) => {
      const res = await t
        .http()
        .post('/webhooks')
        .set(bearer(as))
        .send({ url: receiver.url(path), events: ['plant.created'] });
      expect(res.status).toBe(201);
      receiver.expectSecret(path, exactJson<Created>(res).secret);
    };
    const create = async (as: string, id: number) =>
      expect(
        (
          await t
            .http()
            .post('/plants')
            .set(bearer(as))
            .set('Content-Type', 'application/json')
            .send(`{"id":${id},"name":"P"}`)
        ).status,
      ).toBe(200);
    const flooder = await t.token({ subject: 'flooder' });
    const healthy = await t.token({ subject: 'healthy' });
    receiver.answer('/tarpit', 'hang');
    receiver.answer('/tarpit-2', 'hang');
    await subscribe(flooder, '/tarpit');
    await subscribe(flooder, '/tarpit-2');
    await subscribe(healthy, '/healthy');
    for (let id = 1; id <= 20; id++) await create(flooder, id);
    // The flooder's two subscriptions hold at most three slots together, its owner's share.
    await waitFor(() => receiver.at('/tarpit').length + receiver.at('/tarpit-2').length === 3, {
      what: "the flooder's slots taken",
    });
    const started = Date.now();
    for (let id = 1; id <= 5; id++) await create(healthy, id);
    await waitFor(() => receiver.at('/healthy').length === 5, {
      what: 'the healthy events delivered',
      timeoutMs: 4000,
    });
    // Well within the tarpit's timeout (5 s), which a healthy event would otherwise wait out.
    expect(Date.now() - started).toBeLessThan(2500);
    expect(receiver.at('/tarpit').length).toBeLessThanOrEqual(2);
    expect(receiver.at('/tarpit').length + receiver.at('/tarpit-2').length).toBe(3);
  });
});
