import { parse, parseNumberAndBigInt } from 'lossless-json';
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildDataSourceOptions, createDataSource } from '../src/database/data-source';
import { MIGRATION_LOCK_TABLE } from '../src/database/migrations-runner';
import { mysqlConnection } from './utils/databases';
import { ServiceProcess, startServiceProcess } from './utils/service-process';
import { waitFor } from './utils/wait-for';
import { WEBHOOK_TEST_ENV, WebhookReceiver } from './utils/webhook-receiver';

/**
 * A rolling upgrade as docs/operations.md tells operators to run one: instances of the previous
 * release serve under a steady create/list/delete load with a webhook subscriber, an instance of
 * this release starts beside them and migrates the shared MariaDB database, and the old instances
 * are replaced one at a time (one of them restarted on the migrated schema first, as a crashed
 * instance would be); then, still under load, the post-deployment migrations run
 * (`plantstore migrate --post-deployment`), removing what only the previous release used. No request
 * may fail, every change must reach the subscriber exactly once, and the database must end exactly
 * as this release's entities describe it.
 * Afterwards every subscription, one the previous release made after the migration included, is
 * shown with an id JSON.parse reads exactly, and the ids the previous release gave still name them.
 *
 * scripts/ci/rollout.sh builds the previous release (the commit before the newest migration) and
 * this one, and runs this spec with ROLLOUT_PREVIOUS and ROLLOUT_CURRENT pointing at them: on one
 * MariaDB server, then on a Galera cluster behind HAProxy (ROLLOUT_MYSQL_URL), where the contract
 * step's schema change must not hold the cluster's writes either.
 */
const PREVIOUS = process.env.ROLLOUT_PREVIOUS;
const CURRENT = process.env.ROLLOUT_CURRENT;
/** The server (or a Galera cluster's HAProxy) as a URL without a database; ROLLOUT_MYSQL_URL may name another. */
const SERVER = process.env.ROLLOUT_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
/** Dropped and created afresh: a database of its own, which ROLLOUT_DATABASE may name. */
const DB = process.env.ROLLOUT_DATABASE ?? 'plantstore_rollout';
const describeRollout = PREVIOUS && CURRENT ? describe : describe.skip;

jest.setTimeout(300_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Instance {
  name: string;
  service: ServiceProcess;
  inFlight: number;
}

interface Load {
  failures: string[];
  /** `plant.created 9007…` for every change the service acknowledged. */
  acknowledged: Set<string>;
  requests: number;
  stop: () => Promise<void>;
}

/**
 * `workers` clients, each creating a plant, listing and deleting it, over and over, every request
 * to the next instance in rotation, as a load balancer spreads them. An instance leaves the
 * rotation before it is stopped (the balancer drains it first).
 */
function startLoad(rotation: Instance[], token: string, workers = 4): Load {
  const load: Load = { failures: [], acknowledged: new Set(), requests: 0, stop: async () => undefined };
  let running = true;
  let turn = 0;
  let nextId = 2n ** 53n + 1n;
  const send = async (method: string, path: string, body: string | undefined, expected: number) => {
    const instance = rotation[turn++ % rotation.length];
    instance.inFlight += 1;
    load.requests += 1;
    try {
      const res = await fetch(`${instance.service.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body,
      });
      const text = await res.text();
      if (res.status !== expected) load.failures.push(`${method} ${path} on ${instance.name}: ${res.status} ${text}`);
      return res.status === expected;
    } catch (error) {
      load.failures.push(`${method} ${path} on ${instance.name}: ${(error as Error).message}`);
      return false;
    } finally {
      instance.inFlight -= 1;
    }
  };
  const worker = async () => {
    while (running) {
      const id = nextId++;
      const tag = id % 2n === 0n ? ',"tag":"even"' : '';
      if (await send('POST', '/plants', `{"id":${id},"name":"Rollout ${id}"${tag}}`, 200)) {
        load.acknowledged.add(`plant.created ${id}`);
      }
      await send('GET', '/plants?limit=5', undefined, 200);
      if (await send('DELETE', `/plants/${id}`, undefined, 204)) load.acknowledged.add(`plant.deleted ${id}`);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  load.stop = async () => {
    running = false;
    await done;
  };
  return load;
}

describeRollout(`Rolling upgrade from the previous release on one MariaDB database (${SERVER})`, () => {
  const receiver = new WebhookReceiver();
  const instances: Instance[] = [];
  const env = {
    ...WEBHOOK_TEST_ENV,
    DATABASE_URL: `${SERVER}/${DB}`,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
  };
  const start = async (name: string, build: string): Promise<Instance> => {
    const instance = { name, service: await startServiceProcess(env, 120_000, build), inFlight: 0 };
    instances.push(instance);
    return instance;
  };
  /** Out of the rotation, its requests answered, then SIGTERM: a clean exit is expected. */
  const drainAndStop = async (rotation: Instance[], instance: Instance) => {
    rotation.splice(rotation.indexOf(instance), 1);
    await waitFor(() => instance.inFlight === 0, { what: `${instance.name} drained` });
    await expect(instance.service.stop()).resolves.toBe(0);
  };

  beforeAll(async () => {
    const admin = await mysqlConnection(SERVER, '');
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
      await admin.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4`);
    } finally {
      await admin.end();
    }
    await receiver.start();
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.service.stop('SIGKILL')));
    await receiver.close();
  });

  it('answers every request and delivers every event exactly once while instances are replaced and the contract runs', async () => {
    const old1 = await start('previous #1', PREVIOUS!);
    const old2 = await start('previous #2', PREVIOUS!);
    const token = execFileSync(
      process.execPath,
      [join(PREVIOUS!, 'dist', 'cli.js'), 'token', 'create', '--user', 'rollout'],
      {
        env: { ...process.env, ...env, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
        cwd: PREVIOUS,
      },
    )
      .toString()
      .trim()
      .split('\n')
      .pop()!;
    /** A call as a JavaScript client makes it: the answer read with JSON.parse. */
    const call = async (instance: Instance, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${instance.service.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, text, json: text ? (JSON.parse(text) as unknown) : undefined };
    };
    const subscribed = await fetch(`${old1.service.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url('/rollout'), events: ['plant.created', 'plant.deleted'] }),
    });
    expect(subscribed.status).toBe(201);
    const subscription = parse(await subscribed.text(), null, parseNumberAndBigInt) as { id: bigint; secret: string };
    receiver.expectSecret('/rollout', subscription.secret);

    const rotation = [old1, old2];
    const load = startLoad(rotation, token);
    await sleep(2000);
    // This release migrates the database while both old instances serve.
    const new1 = await start('current #1', CURRENT!);
    rotation.push(new1);
    await sleep(2000);
    // An old instance that restarts now (a crash, a rescheduled pod) starts on the migrated schema.
    await drainAndStop(rotation, old1);
    const old3 = await start('previous #3', PREVIOUS!);
    rotation.push(old3);
    // A subscription made by the previous release on the migrated schema, as a client may make one then.
    const late = await call(old3, 'POST', '/webhooks', {
      url: receiver.url('/late'),
      events: ['plant.deleted'],
    });
    expect(late.status).toBe(201);
    const lateSubscription = parse(late.text, null, parseNumberAndBigInt) as { id: bigint; secret: string };
    receiver.expectSecret('/late', lateSubscription.secret);
    await sleep(2000);
    await drainAndStop(rotation, old2);
    const new2 = await start('current #2', CURRENT!);
    rotation.push(new2);
    await sleep(2000);
    await drainAndStop(rotation, old3);
    await sleep(2000);
    // Every instance runs this release: the contract step, under the same load.
    const contracted = await promisify(execFile)(
      process.execPath,
      [join(CURRENT!, 'dist', 'cli.js'), 'migrate', '--post-deployment'],
      { env: { ...process.env, ...env, NODE_ENV: 'production', LOG_LEVEL: 'silent' }, cwd: CURRENT },
    );
    expect(contracted.stdout).toMatch(/^applied PreviousReleaseColumnsDropped\d+\n.*The schema is up to date\.\n$/s);
    const requestsBefore = load.requests;
    await sleep(2000);
    expect(load.requests).toBeGreaterThan(requestsBefore);
    await load.stop();

    expect(load.failures).toEqual([]);
    expect(load.requests).toBeGreaterThan(300);
    const received = () => receiver.deliveries.filter((delivery) => delivery.path === '/rollout');
    await waitFor(() => received().length >= load.acknowledged.size, {
      what: `${load.acknowledged.size} events delivered`,
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    await sleep(1000); // Anything delivered twice would arrive now.
    const events = received().map((delivery) => {
      expect(delivery.verified).toMatchObject({ ok: true });
      const body = /^\{"type":"(plant\.\w+)","timestamp":"[^"]+","data":(\{"id":(\d+).*\})\}$/.exec(delivery.body);
      expect(body).not.toBeNull();
      const [, type, data, id] = body!;
      // The same body whichever release recorded the event and whichever delivered it.
      const tag = BigInt(id) % 2n === 0n ? ',"tag":"even"' : '';
      expect(data).toBe(type === 'plant.created' ? `{"id":${id},"name":"Rollout ${id}"${tag}}` : `{"id":${id}}`);
      return `${type} ${id}`;
    });
    expect(new Set(events).size).toBe(events.length);
    expect(events.sort()).toEqual([...load.acknowledged].sort());

    // An event this release recorded is sent as evt_<n>, its id in GET /events, with the same body;
    // one the previous release recorded (or sent) as msg_<n>, the id it always had.
    const feed = new Map<string, string>();
    for (let page: string | undefined = '/events?order=asc&limit=1000'; page !== undefined;) {
      const res = await fetch(`${new2.service.url}${page}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      for (const event of parse(await res.text(), null, parseNumberAndBigInt) as { id: string; type: string }[]) {
        feed.set(event.id, event.type);
      }
      const next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '');
      page = next ? `/events${next[1]}` : undefined;
    }
    const ids = received().map((delivery) => String(delivery.headers['webhook-id']));
    expect(ids.filter((id) => !/^(evt|msg)_\d+$/.test(id))).toEqual([]);
    const sentAsEvents = received().filter((delivery) => String(delivery.headers['webhook-id']).startsWith('evt_'));
    expect(sentAsEvents.length).toBeGreaterThan(0);
    for (const delivery of sentAsEvents) {
      expect(feed.get(String(delivery.headers['webhook-id']))).toBe(JSON.parse(delivery.body).type);
    }

    // Every subscription now has an id JSON.parse reads exactly, and the old ids still name them.
    const listed = async () => (await call(new2, 'GET', '/webhooks')).json as { id: number; url: string }[];
    await waitFor(async () => (await listed()).every((listedOne) => Number.isSafeInteger(listedOne.id)), {
      what: 'every subscription shown with an id within 2^53 - 1',
      intervalMs: 200,
    });
    expect((await listed()).map((listedOne) => listedOne.url).sort()).toEqual(
      [receiver.url('/late'), receiver.url('/rollout')].sort(),
    );
    expect((await call(new2, 'GET', `/webhooks/${subscription.id}/deliveries`)).status).toBe(200);
    expect((await call(new2, 'DELETE', `/webhooks/${lateSubscription.id}`)).status).toBe(204);
    const [current] = await listed();
    expect((await call(new2, 'DELETE', `/webhooks/${current.id}`)).status).toBe(204);
    expect(await listed()).toEqual([]);

    // The previous release's columns and triggers are gone: the schema is the entities', no more.
    const dataSource = await createDataSource(
      // MariaDB's own dialect: it reports a nullable column's default as the text NULL.
      buildDataSourceOptions({
        type: 'mariadb',
        url: `${SERVER}/${DB}`,
        poolSize: 2,
        connectTimeoutMs: 10_000,
        queryTimeoutMs: 10_000,
      }),
    ).initialize();
    try {
      expect((await dataSource.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query)).toEqual([]);
      const tables = (await dataSource.query(
        'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()',
      )) as { name: string }[];
      expect(
        tables
          .map((table) => table.name)
          .filter((name) => name !== 'migrations' && name !== MIGRATION_LOCK_TABLE)
          .sort(),
      ).toEqual(dataSource.entityMetadatas.map((entity) => entity.tableName).sort());
      await expect(
        dataSource.query('SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()'),
      ).resolves.toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });
});
