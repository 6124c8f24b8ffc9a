import { WORKER_NEEDS_DELIVERY, WORKER_NEEDS_KEY } from '../src/worker';
import { testDatabases } from './utils/databases';
import {
  ServiceProcess,
  createTokenWithCli,
  spawnServiceProcess,
  startServiceProcess,
  startWorkerProcess,
} from './utils/service-process';
import { TestApp, bearer, exactJson, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

jest.setTimeout(120_000);

/**
 * Delivery as its own role: API instances with WEBHOOK_DELIVERY=false record events and send none;
 * `plantstore worker` processes deliver them. `t` cleans and reads the database.
 */
describe.each(testDatabases())('Webhook workers on %s', (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const processes: ServiceProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp(database);
    receiver = await new WebhookReceiver().start();
    env = { ...t.db.env, ...WEBHOOK_TEST_ENV, LOG_LEVEL: 'info' };
  });
  afterAll(async () => {
    await Promise.all(processes.map((process) => process.stop('SIGKILL')));
    await t.close();
    await receiver.close();
  });
  beforeEach(() => t.reset());

  const api = async () => {
    const service = await startServiceProcess({ ...env, WEBHOOK_DELIVERY: 'false' });
    processes.push(service);
    return service;
  };
  const worker = async (extra: Record<string, string> = {}) => {
    const started = await startWorkerProcess({ ...env, ...extra });
    processes.push(started);
    return started;
  };
  const subscribe = async (service: ServiceProcess, token: string, path: string) => {
    const res = await fetch(`${service.url}/webhooks`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url(path), events: ['plant.created'] }),
    });
    expect(res.status).toBe(201);
    receiver.expectSecret(path, ((await res.json()) as { secret: string }).secret);
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
  const deliveredIds = (path: string) =>
    receiver.at(path).map((delivery) => {
      expect(delivery.verified.ok).toBe(true);
      return String(exactJson<{ data: { id: bigint } }>({ text: delivery.body } as never).data.id);
    });
  const pending = async () => {
    const rows = (await t.dataSource.query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = 'pending'")) as {
      n: unknown;
    }[];
    return Number(rows[0].n);
  };
  const deliveryLines = (service: ServiceProcess) =>
    service.logLines().filter((line) => line.context === 'Webhooks' && line.result === 'delivered');

  it('leaves delivery to a worker when the API instance has WEBHOOK_DELIVERY=false', async () => {
    const token = await createTokenWithCli(t.db.env, 'apart');
    const service = await api();
    await subscribe(service, token, '/apart');
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    await createPlants(service, token, ids);
    // Several poll intervals of the test settings: the API instance sends nothing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at('/apart')).toHaveLength(0);
    await expect(pending()).resolves.toBe(ids.length);
    expect(service.output()).toContain('WEBHOOK_DELIVERY=false');

    const delivering = await worker();
    await waitFor(() => new Set(deliveredIds('/apart')).size === ids.length, { what: 'every event delivered' });
    await waitFor(async () => (await pending()) === 0, { what: 'every delivery recorded' });
    expect(new Set(deliveredIds('/apart'))).toEqual(new Set(ids.map(String)));
    // Each attempt is logged once it is recorded.
    await waitFor(() => deliveryLines(delivering).length === receiver.at('/apart').length, {
      what: 'a log line per attempt from the worker',
    });
    expect(deliveryLines(service)).toHaveLength(0);
    // A worker serves no API.
    await expect(fetch(`${delivering.url}/health/live`)).rejects.toThrow();
  });

  it('shares the work between two workers, and each finishes its attempt in flight on SIGTERM', async () => {
    const token = await createTokenWithCli(t.db.env, 'shared');
    const service = await api();
    await subscribe(service, token, '/shared');
    const [first, second] = await Promise.all([
      worker({ WEBHOOK_TIMEOUT_MS: '10000' }),
      worker({ WEBHOOK_TIMEOUT_MS: '10000' }),
    ]);
    const ids = Array.from({ length: 200 }, (_, i) => i + 1);
    await createPlants(service, token, ids);
    await waitFor(() => new Set(deliveredIds('/shared')).size === ids.length, {
      what: '200 events delivered',
      timeoutMs: 60_000,
    });
    const duplicates = deliveredIds('/shared').length - ids.length;
    expect(duplicates).toBeLessThanOrEqual(5);

    // One more event, whose attempt the receiver holds while both workers are stopped.
    receiver.answer('/shared', 'hang');
    await createPlants(service, token, [1000]);
    await waitFor(() => deliveredIds('/shared').includes('1000'), { what: 'the attempt in flight' });
    const exits = [first.stop('SIGTERM'), second.stop('SIGTERM')];
    await waitFor(() => `${first.output()}${second.output()}`.includes('finishing what is in flight'), {
      what: 'the shutdown begun',
    });
    receiver.release('/shared', 204);
    await expect(Promise.all(exits)).resolves.toEqual([0, 0]);
    await expect(pending()).resolves.toBe(0);
    // Every request the receiver got is an attempt one of the workers recorded.
    const attempts = (await t.dataSource.query('SELECT COUNT(*) AS n FROM webhook_attempts')) as { n: unknown }[];
    expect(Number(attempts[0].n)).toBe(deliveredIds('/shared').length);
  });

  it.each([
    ['without WEBHOOK_SECRET_KEY', { WEBHOOK_SECRET_KEY: '' }, WORKER_NEEDS_KEY],
    ['with WEBHOOK_DELIVERY=false', { WEBHOOK_DELIVERY: 'false' }, WORKER_NEEDS_DELIVERY],
  ])('refuses to start %s, saying why', async (_case, extra, why) => {
    const refused = await spawnServiceProcess({ ...env, ...extra }, undefined, ['cli', 'worker']);
    processes.push(refused);
    await expect(refused.exited).resolves.toBe(1);
    expect(refused.output()).toContain(why);
  });
});
