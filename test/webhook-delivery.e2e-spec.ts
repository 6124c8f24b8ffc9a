import { WebhookTestInProgress } from '../src/webhooks/webhooks.errors';
import { testDatabases } from './utils/databases';
import { ServiceProcess, createTokenWithCli, startServiceProcess } from './utils/service-process';
import { TestApp, bearer, exactJson, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

jest.setTimeout(120_000);

/**
 * Delivery as operators run it: service processes on one database, stopped with SIGKILL, started
 * again, two at once. `t` is an app without WEBHOOK_SECRET_KEY (it delivers nothing) that cleans and
 * reads the database.
 */
describe.each(testDatabases())('Webhook delivery across processes on %s', (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp(database);
    receiver = await new WebhookReceiver().start();
    env = { ...t.db.env, ...WEBHOOK_TEST_ENV, LOG_LEVEL: 'info' };
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop('SIGKILL')));
    await t.close();
    await receiver.close();
  });
  beforeEach(() => t.reset());

  const start = async (extra: Record<string, string> = {}) => {
    const service = await startServiceProcess({ ...env, ...extra });
    services.push(service);
    return service;
  };
  const subscribe = async (service: ServiceProcess, token: string, path: string) => {
    const res = await fetch(`${service.url}/webhooks`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url(path), events: ['plant.created'] }),
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: number; secret: string };
    receiver.expectSecret(path, created.secret);
    return created;
  };
  const createPlants = async (service: ServiceProcess, token: string, ids: number[]) => {
    for (const id of ids) {
      const res = await fetch(`${service.url}/plants`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `Plant ${id}` }),
      });
      expect(res.status).toBe(200);
    }
  };
  const deliveredIds = (path: string) => {
    const ids = receiver.at(path).map((delivery) => {
      expect(delivery.verified.ok).toBe(true);
      return exactJson<{ data: { id: bigint } }>({ text: delivery.body } as never).data.id;
    });
    return { all: ids, unique: new Set(ids.map(String)) };
  };

  it('delivers an event subscribed through one instance and caused through another', async () => {
    const token = await createTokenWithCli(t.db.env, 'across');
    const [a, b] = await Promise.all([start(), start()]);
    // A receiver URL may carry its own secret: no line of either instance quotes it, whatever the attempt.
    const path = '/across?key=receiver-query-secret';
    receiver.answer(path, 500, 204);
    await subscribe(a, token, path);
    await createPlants(b, token, [1]);
    await waitFor(() => receiver.at(path).length >= 2, { what: 'the failed attempt and the delivery' });
    expect(deliveredIds(path).unique).toEqual(new Set(['1']));
    await Promise.all([a.stop(), b.stop()]);
    expect(
      [...a.logLines(), ...b.logLines()].filter((line) => line.context === 'Webhooks').length,
    ).toBeGreaterThanOrEqual(2);
    expect(a.output() + b.output()).not.toContain('receiver-query-secret');
  });

  it('delivers everything after the instance is killed with SIGKILL while events are due, and restarted', async () => {
    const token = await createTokenWithCli(t.db.env, 'killed');
    // Attempts hang: the instance holds claims when it dies, and more events wait unclaimed.
    receiver.answer('/killed', 'hang');
    const first = await start({ WEBHOOK_CONCURRENCY: '4' });
    const { secret } = await subscribe(first, token, '/killed');
    const ids = Array.from({ length: 30 }, (_, i) => i + 1);
    await createPlants(first, token, ids);
    await waitFor(() => receiver.at('/killed').length >= 4, { what: 'attempts in flight' });
    first.child.kill('SIGKILL');
    await first.exited;

    receiver.answer('/killed', 204);
    const second = await start();
    await waitFor(() => deliveredIds('/killed').unique.size === ids.length, {
      what: 'every event delivered after the restart',
      timeoutMs: 60_000,
    });
    expect(deliveredIds('/killed').unique).toEqual(new Set(ids.map(String)));
    await waitFor(
      async () => {
        const rows = (await t.dataSource.query(
          "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state <> 'delivered'",
        )) as {
          n: unknown;
        }[];
        return Number(rows[0].n) === 0;
      },
      { what: 'every delivery recorded as delivered' },
    );

    // One line per attempt, never the secret, a signature or a body.
    await second.stop();
    const lines = [...first.logLines(), ...second.logLines()].filter((line) => line.context === 'Webhooks');
    expect(lines.length).toBeGreaterThanOrEqual(ids.length);
    const output = first.output() + second.output();
    expect(output).not.toContain(secret);
    expect(output).not.toContain(secret.slice('whsec_'.length));
    for (const delivery of receiver.at('/killed')) {
      expect(output).not.toContain(String(delivery.headers['webhook-signature']).slice(3));
      expect(output).not.toContain(delivery.body);
    }
    expect(lines.find((line) => line.result === 'delivered')).toMatchObject({
      webhookId: expect.stringMatching(/^evt_\d+$/),
      subscriptionId: expect.any(String),
      event: 'plant.created',
      attempt: expect.any(Number),
      status: 204,
      durationMs: expect.any(Number),
    });
  });

  it('finishes an attempt in flight on SIGTERM, records it, and exits cleanly', async () => {
    const token = await createTokenWithCli(t.db.env, 'stopping');
    receiver.answer('/slow-ok', 'hang');
    const service = await start({ SHUTDOWN_TIMEOUT_MS: '5000' });
    await subscribe(service, token, '/slow-ok');
    await createPlants(service, token, [1]);
    await waitFor(() => receiver.at('/slow-ok').length === 1, { what: 'the attempt in flight' });
    const exited = service.stop('SIGTERM');
    // Answered once the instance is shutting down: the attempt's outcome is still recorded.
    await waitFor(() => service.output().includes('readiness is now 503'), { what: 'the shutdown begun' });
    receiver.release('/slow-ok', 204);
    await expect(exited).resolves.toBe(0);
    const rows = (await t.dataSource.query('SELECT state, attempts FROM webhook_deliveries')) as {
      state: string;
      attempts: unknown;
    }[];
    expect(rows.map((row) => [row.state, Number(row.attempts)])).toEqual([['delivered', 1]]);
    expect(service.logLines().some((line) => line.context === 'Webhooks' && line.result === 'delivered')).toBe(true);
  });

  it('delivers 500 events with two instances: each one, duplicates rare', async () => {
    const token = await createTokenWithCli(t.db.env, 'many');
    // Duplicates measured here are two instances sending one event. An attempt that outlives the
    // timeout on a loaded machine is sent again by design (at least once): the production bound
    // keeps those out of the count.
    const [a, b] = await Promise.all([start({ WEBHOOK_TIMEOUT_MS: '10000' }), start({ WEBHOOK_TIMEOUT_MS: '10000' })]);
    await subscribe(a, token, '/many');
    const ids = Array.from({ length: 500 }, (_, i) => i + 1);
    // Half through each instance, at once.
    await Promise.all([
      createPlants(
        a,
        token,
        ids.filter((id) => id % 2 === 0),
      ),
      createPlants(
        b,
        token,
        ids.filter((id) => id % 2 === 1),
      ),
    ]);
    await waitFor(() => deliveredIds('/many').unique.size === ids.length, {
      what: '500 events delivered',
      timeoutMs: 60_000,
    });
    await Promise.all([a.stop(), b.stop()]);
    const { all, unique } = deliveredIds('/many');
    expect(unique).toEqual(new Set(ids.map(String)));
    const duplicates = all.length - unique.size;
    console.log(`500 events through two instances on ${database}: ${duplicates} duplicate deliveries`);
    expect(duplicates).toBeLessThanOrEqual(5);
    const perInstance = [a, b].map(
      (service) =>
        service.logLines().filter((line) => line.context === 'Webhooks' && line.result === 'delivered').length,
    );
    expect(perInstance.reduce((x, y) => x + y, 0)).toBe(all.length);
  });
  /**
   * A receiver that takes SLOW_MS to answer, and two instances that may both send to it: what
   * happens while an attempt waits for its answer.
   */
  describe('while an attempt waits for a slow receiver', () => {
    const SLOW_MS = 1500;
    /** The clocks compared are this machine's, read by several processes (and the database) to the millisecond. */
    const CLOCK_SLACK_MS = 20;
    /**
     * A recorded attempt is dated on the database's clock: its now, less the attempt's age as the
     * instance measured it just before sending the statement. The date runs late by however long
     * that statement then waited (for a pool connection, on a busy machine): tens of milliseconds,
     * far less than the SLOW_MS that separates when an attempt began from when its answer came.
     */
    const RECORDING_LAG_MS = SLOW_MS / 3;
    let a: ServiceProcess;
    let b: ServiceProcess;

    beforeAll(async () => {
      [a, b] = await Promise.all([start({ WEBHOOK_TIMEOUT_MS: '10000' }), start({ WEBHOOK_TIMEOUT_MS: '10000' })]);
    });
    const call = (service: ServiceProcess, token: string, path: string, method = 'POST') =>
      fetch(`${service.url}${path}`, { method, headers: bearer(token) });

    it('sends a delivery resent meanwhile once more after that attempt, never beside it, as the next attempt', async () => {
      const token = await createTokenWithCli(t.db.env, 'resending');
      receiver.answer('/slow', { status: 204, afterMs: SLOW_MS });
      const { id } = await subscribe(a, token, '/slow');
      await createPlants(a, token, [1]);
      await waitFor(() => receiver.at('/slow').length === 1, { what: 'the first attempt under way' });
      const [first] = receiver.at('/slow');
      const eventId = String(first.headers['webhook-id']);
      // Through the other instance than the one that created the plant; either may be sending it.
      const resent = await call(b, token, `/webhooks/${id}/deliveries/${eventId}/resend`);
      expect(resent.status).toBe(202);
      expect(first.answeredAt).toBeUndefined();

      type Attempt = { eventId: string; attempt: number };
      const attempts = async () =>
        (await (await call(a, token, `/webhooks/${id}/deliveries`, 'GET')).json()) as Attempt[];
      await waitFor(async () => (await attempts()).length === 2, { what: 'two attempts recorded', timeoutMs: 20_000 });
      const rows = (await t.dataSource.query('SELECT state, attempts, claim FROM webhook_deliveries')) as {
        state: string;
        attempts: unknown;
        claim: unknown;
      }[];
      // Recorded as delivered after its second attempt: nothing more is sent.
      expect(rows.map((row) => [row.state, Number(row.attempts), row.claim])).toEqual([['delivered', 2, null]]);
      const requests = receiver.at('/slow');
      expect(requests).toHaveLength(2);
      expect(requests.map((request) => request.headers['webhook-id'])).toEqual([eventId, eventId]);
      expect(requests[1].body).toBe(requests[0].body);
      // The second reached the receiver only once the first had been answered.
      console.log(
        `A resend during an attempt on ${database}: sent ${requests[1].receivedAt - requests[0].answeredAt!} ms ` +
          'after that attempt was answered',
      );
      expect(requests[1].receivedAt).toBeGreaterThanOrEqual(requests[0].answeredAt!);
      const listed = await attempts();
      expect(listed.map((attempt) => [attempt.eventId, attempt.attempt])).toEqual([
        [eventId, 2],
        [eventId, 1],
      ]);
    });

    it('dates an attempt when it began, which is when the receiver saw it, not when its answer came', async () => {
      const token = await createTokenWithCli(t.db.env, 'dated');
      receiver.answer('/dated', { status: 204, afterMs: SLOW_MS });
      const { id } = await subscribe(a, token, '/dated');
      const before = Date.now();
      await createPlants(a, token, [1]);
      type Attempt = { attemptedAt: string; durationMs: number };
      const attempts = async () =>
        (await (await call(a, token, `/webhooks/${id}/deliveries`, 'GET')).json()) as Attempt[];
      await waitFor(async () => (await attempts()).length === 1, { what: 'the attempt recorded', timeoutMs: 20_000 });
      const [attempt] = await attempts();
      const [request] = receiver.at('/dated');
      const began = Date.parse(attempt.attemptedAt);
      console.log(
        `An attempt to a receiver answering in ${SLOW_MS} ms on ${database}: dated ${request.receivedAt - began} ms ` +
          `before the receiver saw it, ${attempt.durationMs} ms long`,
      );
      // After the change that recorded the event, before the request reached the receiver (give or
      // take its recording's lag), and so long before its answer came.
      expect(began).toBeGreaterThanOrEqual(before - CLOCK_SLACK_MS);
      expect(began).toBeLessThanOrEqual(request.receivedAt + RECORDING_LAG_MS);
      expect(attempt.durationMs).toBeGreaterThanOrEqual(SLOW_MS);
    });

    it('runs one test of a subscription at a time, whichever instances they are asked of, dated when it began', async () => {
      const token = await createTokenWithCli(t.db.env, 'testing');
      receiver.answer('/tested', { status: 202, afterMs: SLOW_MS });
      const { id } = await subscribe(a, token, '/tested');
      const before = Date.now();
      const first = call(a, token, `/webhooks/${id}/test`);
      await waitFor(() => receiver.at('/tested').length === 1, { what: 'the first test sent' });
      const second = await call(b, token, `/webhooks/${id}/test`);
      expect(second.status).toBe(409);
      await expect(second.json()).resolves.toEqual({
        error: 409,
        message: new WebhookTestInProgress(BigInt(id)).message,
      });
      const answered = await first;
      expect(answered.status).toBe(200);
      const result = (await answered.json()) as { delivered: boolean; statusCode: number; attemptedAt: string };
      expect(result).toMatchObject({ delivered: true, statusCode: 202 });
      expect(receiver.at('/tested')).toHaveLength(1);
      expect(Date.parse(result.attemptedAt)).toBeGreaterThanOrEqual(before - CLOCK_SLACK_MS);
      expect(Date.parse(result.attemptedAt)).toBeLessThanOrEqual(receiver.at('/tested')[0].receivedAt + CLOCK_SLACK_MS);
      // Once it has answered, the next test runs, through either instance.
      receiver.answer('/tested', 204);
      const next = await call(b, token, `/webhooks/${id}/test`);
      expect(next.status).toBe(200);
      expect(receiver.at('/tested')).toHaveLength(2);
    });
  });
});
