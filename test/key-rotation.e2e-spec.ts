import { Webhook } from 'standardwebhooks';
import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { CliIo, EXIT_OK, runCli } from '../src/cli';
import { IdempotentAnswerUnavailable } from '../src/idempotency/idempotency.errors';
import { MetricsService } from '../src/metrics/metrics.service';
import { keyIdOf } from '../src/secrets/secret-box';
import { testDatabases } from './utils/databases';
import { cliContext } from './utils/service-process';
import { TestApp, bearer, exactJson, expectErrorBody, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

const OLD = randomBytes(32);
const NEW = randomBytes(32);
/** WEBHOOK_SECRET_KEY as the operator writes it: the key that seals first. */
const keys = (...list: Buffer[]) => list.map((key) => key.toString('base64')).join(',');

interface Subscribed {
  key: string;
  path: string;
  /** The first answer, which every replay must repeat. */
  text: string;
}

/** What an instance counted of values under keys it does not hold, as Prometheus reads it. */
async function unopened(app: TestApp): Promise<string> {
  const metric = await app.app.get(MetricsService).registry.getSingleMetricAsString('sealed_values_unopened_total');
  return metric
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n');
}

/**
 * Rotating WEBHOOK_SECRET_KEY while the service runs: every step of the documented order answers
 * without a 5xx, every subscription stays deliverable and every replay works; a wrong order is
 * refused loudly (a named 422, an error log and a metric naming the key id), never with a 500.
 */
describe.each(testDatabases())('Secret key rotation on %s', (database) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let token: string;
  let dbEnv: Record<string, string>;

  const start = async (...list: Buffer[]) => {
    t = await startTestApp(database, { ...WEBHOOK_TEST_ENV, ...dbEnv, WEBHOOK_SECRET_KEY: keys(...list) });
  };
  const restart = async (...list: Buffer[]) => {
    await t.close();
    await start(...list);
  };
  const subscribe = (key: string, path: string) =>
    t
      .http()
      .post('/webhooks')
      .set(bearer(token))
      .set('Idempotency-Key', key)
      .send({ url: receiver.url(path), events: ['plant.created'] });
  const cli = async (...list: Buffer[]) => {
    const out: string[] = [];
    const io: CliIo = { out: (line) => out.push(line), err: (line) => out.push(line) };
    const code = await runCli(['secrets', 'reseal'], io, cliContext({ ...dbEnv, WEBHOOK_SECRET_KEY: keys(...list) }));
    return { code, out };
  };

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
    dbEnv = t.db.env;
    await t.close();
  });
  beforeEach(async () => {
    await start(OLD);
    await t.reset();
    token = await t.token({ subject: 'rotator' });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await t.close();
  });
  afterAll(() => receiver.close());

  it('answers a replay sealed under a key the instance does not hold with a named 422, logged and counted', async () => {
    // The wrong order: an instance promoted the new key before this one accepted it.
    await restart(NEW, OLD);
    const first = await subscribe('early', '/early');
    expect(first.status).toBe(201);
    await restart(OLD);

    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const replay = await subscribe('early', '/early');
    expectErrorBody(replay, 422);
    expect(replay.body.message).toBe(new IdempotentAnswerUnavailable().message);
    const lines = logged.mock.calls.map(([line]) => String(line));
    expect(lines).toContainEqual(expect.stringContaining(`sealed with key ${keyIdOf(NEW)}, which this instance`));
    expect(lines.join('\n')).not.toContain(NEW.toString('base64'));
    await expect(unopened(t)).resolves.toBe(`sealed_values_unopened_total{key_id="${keyIdOf(NEW)}"} 1`);
    // Nothing else is broken: the other calls answer as ever.
    expect((await t.http().get('/webhooks').set(bearer(token))).status).toBe(200);

    // Once the instance accepts the key, the stored answer was never lost.
    await restart(OLD, NEW);
    const again = await subscribe('early', '/early');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('reseals signing secrets and stored answers with the CLI, so the old key can be removed', async () => {
    const first = await subscribe('before', '/before');
    expect(first.status).toBe(201);
    const { secret, id } = exactJson<{ secret: string; id: bigint }>(first);
    // A rotation under the old key: the secret it replaced, still signing, is sealed under it too.
    const rotated = await t
      .http()
      .post(`/webhooks/${id}/rotate-secret`)
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"gracePeriodSeconds":3600}');
    expect(rotated.status).toBe(200);
    const current = exactJson<{ secret: string }>(rotated).secret;
    receiver.expectSecret('/before', current);
    await restart(NEW, OLD);

    await expect(cli(NEW, OLD)).resolves.toEqual({
      code: EXIT_OK,
      out: [
        `Resealing under key ${keyIdOf(NEW)}, the first of WEBHOOK_SECRET_KEY.`,
        'webhook signing secrets: 1 resealed',
        'webhook signing secrets being rotated out: 1 resealed',
        'stored idempotent answers: 1 resealed',
        `Nothing is left sealed under another key: once every instance seals with ${keyIdOf(NEW)}, ` +
          `${keyIdOf(OLD)} can be removed from WEBHOOK_SECRET_KEY.`,
      ],
    });
    await expect(cli(NEW, OLD)).resolves.toMatchObject({
      code: EXIT_OK,
      out: expect.arrayContaining(['webhook signing secrets: 0 resealed', 'stored idempotent answers: 0 resealed']),
    });

    await restart(NEW);
    const replay = await subscribe('before', '/before');
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    const created = await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":1,"name":"Resealed"}');
    expect(created.status).toBe(200);
    await waitFor(() => receiver.at('/before').length > 0, { what: 'a delivery signed with the resealed secrets' });
    const [delivery] = receiver.at('/before');
    expect(delivery.verified).toMatchObject({ ok: true });
    // Signed with both, each opened under the new key alone.
    expect(() => new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
  });
});

/** Instances of one deployment over one MySQL (a SQLite file is one process's), the key rolled through both. */
(testDatabases().includes('mysql') ? describe : describe.skip)('Secret key rotation through two instances', () => {
  let a: TestApp;
  let b: TestApp;
  let receiver: WebhookReceiver;
  let token: string;
  let dbEnv: Record<string, string>;
  const subscriptions: Subscribed[] = [];
  let nextPlant = 1;

  const start = (...list: Buffer[]) =>
    startTestApp('mysql', { ...WEBHOOK_TEST_ENV, ...dbEnv, WEBHOOK_SECRET_KEY: keys(...list) });
  /** Every answer is what the step expects; none may be a 5xx. */
  const answered = (res: Response, status: number) => {
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBe(status);
    return res;
  };

  const subscribe = async (app: TestApp, name: string) => {
    const path = `/${name}`;
    const res = answered(
      await app
        .http()
        .post('/webhooks')
        .set(bearer(token))
        .set('Idempotency-Key', name)
        .send({ url: receiver.url(path), events: ['plant.created'] }),
      201,
    );
    receiver.expectSecret(path, exactJson<{ secret: string }>(res).secret);
    subscriptions.push({ key: name, path, text: res.text });
  };

  /** Every replay on both instances gives the first answer; a plant change reaches every subscription, signed. */
  const everythingWorks = async () => {
    for (const app of [a, b]) {
      for (const { key, path, text } of subscriptions) {
        const replay = answered(
          await app
            .http()
            .post('/webhooks')
            .set(bearer(token))
            .set('Idempotency-Key', key)
            .send({ url: receiver.url(path), events: ['plant.created'] }),
          201,
        );
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(text);
      }
      const id = nextPlant++;
      answered(
        await app
          .http()
          .post('/plants')
          .set(bearer(token))
          .set('Content-Type', 'application/json')
          .send(`{"id":${id},"name":"Plant ${id}"}`),
        200,
      );
      for (const { path } of subscriptions) {
        await waitFor(() => receiver.at(path).some((delivery) => delivery.body.includes(`"id":${id},`)), {
          what: `plant ${id} delivered to ${path}`,
        });
      }
    }
    for (const { path } of subscriptions) {
      expect(receiver.at(path).filter((delivery) => !delivery.verified.ok)).toEqual([]);
    }
    await expect(a.dataSource.query('SELECT error FROM webhook_attempts WHERE error IS NOT NULL')).resolves.toEqual([]);
    for (const app of [a, b]) await expect(unopened(app)).resolves.toBe('');
  };

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    a = await startTestApp('mysql', { ...WEBHOOK_TEST_ENV, WEBHOOK_SECRET_KEY: keys(OLD) });
    dbEnv = a.db.env;
    b = await start(OLD);
    await a.reset();
    token = await a.token({ subject: 'rolling' });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await receiver?.close();
  });

  it('rolls a new key in and the old one out without a 5xx, a lost webhook or a lost replay', async () => {
    // 1. The old key only.
    await subscribe(a, 'under-old');
    await everythingWorks();

    // 2. The new key accepted, one instance after the other; the old one still seals.
    await a.close();
    a = await start(OLD, NEW);
    await subscribe(a, 'old-accepting-new');
    await everythingWorks();
    await b.close();
    b = await start(OLD, NEW);
    await everythingWorks();

    // 3. The new key promoted on one instance, then on both: the other one already opens what it seals.
    await a.close();
    a = await start(NEW, OLD);
    await subscribe(a, 'new-on-one');
    await everythingWorks();
    await b.close();
    b = await start(NEW, OLD);
    await subscribe(b, 'new-on-both');
    await everythingWorks();

    // 4. What the old key sealed is sealed again under the new one, while both instances serve.
    const out: string[] = [];
    const io: CliIo = { out: (line) => out.push(line), err: (line) => out.push(line) };
    await expect(
      runCli(
        ['secrets', 'reseal', '--batch-size', '1'],
        io,
        cliContext({ ...dbEnv, WEBHOOK_SECRET_KEY: keys(NEW, OLD) }),
      ),
    ).resolves.toBe(EXIT_OK);
    expect(out).toContain('webhook signing secrets: 2 resealed');
    expect(out).toContain('stored idempotent answers: 2 resealed');
    const stale = async () =>
      [
        ...((await a.dataSource.query('SELECT secret AS sealed FROM webhook_subscriptions')) as { sealed: string }[]),
        ...((await a.dataSource.query(
          "SELECT response AS sealed FROM idempotency_keys WHERE response LIKE 'sealed:%'",
        )) as {
          sealed: string;
        }[]),
      ].filter(({ sealed }) => !sealed.replace(/^sealed:/, '').startsWith(`v1.${keyIdOf(NEW)}.`));
    await expect(stale()).resolves.toEqual([]);
    await everythingWorks();

    // 5. The old key removed, one instance after the other.
    await a.close();
    a = await start(NEW);
    await everythingWorks();
    await b.close();
    b = await start(NEW);
    await everythingWorks();
    expect(subscriptions).toHaveLength(4);
  });
});
