import { STATEMENT_RETRY_DEFAULTS } from '../src/database';
import {
  GaleraCluster,
  LoadAnswer,
  describeGalera,
  errorWindowMs,
  report,
  startGaleraCluster,
  startInstance,
  startWriteLoad,
  testPortBase,
  watchCluster,
} from './utils/galera';
import { TestApp, bearer, expectErrorBody } from './utils/test-app';
import { waitFor } from './utils/wait-for';

jest.setTimeout(240_000);

const DB = 'plantstore_galera_failures';
/** The service's defaults: a failing request is not cut shorter than production would cut it. */
const QUERY_TIMEOUT_MS = 5000;
const CONNECT_TIMEOUT_MS = 5000;
/** The longest a failing request may take: one connection wait, one statement wait, the retry window, HTTP. */
const SLOWEST_FAILURE_MS = CONNECT_TIMEOUT_MS + QUERY_TIMEOUT_MS + STATEMENT_RETRY_DEFAULTS.windowMs + 500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every failure a client saw is a 503 `{error, message}`, never a 500 or a hang. */
function expectOnlyQuick503s(failures: LoadAnswer[]): void {
  expect(failures.filter((answer) => answer.status !== 503)).toEqual([]);
  for (const failure of failures) expect(failure.body).toEqual({ error: 503, message: expect.any(String) });
  expect(failures.filter((answer) => answer.ms >= SLOWEST_FAILURE_MS)).toEqual([]);
}

/**
 * What clients of the service see when the Galera cluster behind HAProxy loses a node in each way a
 * node can stop serving (docs/scaling.md, "Failures"): HAProxy routes by each node's health agent
 * (deploy/clustercheck), so a node that is up but cannot serve is taken out like a dead one.
 */
describeGalera('Galera failures behind HAProxy: routing follows cluster state', () => {
  let cluster: GaleraCluster;
  const apps: TestApp[] = [];
  let a: TestApp; // through HAProxy
  let b: TestApp; // through HAProxy: another instance, for read-your-writes
  let token: string;
  let nextId = 1;
  const load = (writers = 4) => {
    const started = startWriteLoad({ writer: a, reader: b, token, firstId: nextId, writers });
    nextId += 1_000_000;
    return started;
  };
  const routedTo = (node: string, timeoutMs = 15_000) =>
    waitFor(async () => (await cluster.routedTo()) === node, {
      what: `HAProxy routing to ${node}`,
      timeoutMs,
      intervalMs: 50,
    });
  /** The ids of `ids` missing on a node, read after it has applied everything committed before. */
  const missingOn = async (node: number, ids: number[]) => {
    const rows = await cluster.onNode<{ id: string }[]>(
      node,
      `SET STATEMENT wsrep_sync_wait = 1 FOR SELECT id FROM \`${DB}\`.plants`,
    );
    const present = new Set(rows.map((row) => Number(row.id)));
    return ids.filter((id) => !present.has(id));
  };

  const clusterSize = async (node: number) => {
    const [row] = await cluster.onNode<{ Value: string }[]>(node, "SHOW STATUS LIKE 'wsrep_cluster_size'");
    return Number(row.Value);
  };

  beforeAll(async () => {
    cluster = await startGaleraCluster(testPortBase(1));
    await cluster.createDatabase(DB);
    a = await startInstance(cluster.haproxyUrl(DB));
    apps.push(a);
    b = await startInstance(cluster.haproxyUrl(DB));
    apps.push(b);
    token = await a.token({ subject: 'failures' });
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    await cluster?.stop();
  });

  it('has a health agent per node that answers 200 only while the node is in the primary component, synced and ready', async () => {
    for (const node of [1, 2, 3]) {
      const agent = await cluster.agent(node);
      expect(agent).toEqual({ status: 200, body: expect.stringMatching(/^Galera node is synced/) });
    }
    await cluster.onNode(2, 'SET GLOBAL wsrep_desync = ON');
    try {
      expect(await cluster.agent(2)).toEqual({
        status: 503,
        body: expect.stringMatching(/not ready: .*wsrep_local_state=2 \(Donor\/Desynced\)/),
      });
    } finally {
      await cluster.onNode(2, 'SET GLOBAL wsrep_desync = OFF');
    }
    await waitFor(async () => (await cluster.agent(2)).status === 200, { what: 'node 2 synced again' });

    await cluster.killNode(3);
    expect(await cluster.agent(3)).toEqual({
      status: 503,
      body: expect.stringMatching(/not ready: it does not answer/),
    });
    await cluster.startNode(3);
    expect((await cluster.agent(3)).status).toBe(200);
    await routedTo('node1');
  });

  it('keeps taking writes when the node HAProxy writes to is partitioned away: errors stop within 10 s, nothing acknowledged is lost, reads stay causal; it rejoins, is routed to only once synced, and all nodes hold the same plants', async () => {
    const writes = load();
    await sleep(1000);
    const isolatedAt = Date.now();
    await cluster.isolateNode(1);
    await routedTo('node2');
    // Write on for a while after the switch, so that "errors stop" is seen, not assumed.
    await sleep(Math.max(0, isolatedAt + 15_000 - Date.now()));

    // Heal under the same load; sample where new connections go and what node 1 says meanwhile.
    const routedWhileNotSynced: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if ((await cluster.routedTo()) === 'node1') {
          const state = await cluster.state(1);
          if (state.localState !== 4 || state.clusterStatus !== 'Primary')
            routedWhileNotSynced.push(JSON.stringify(state));
        }
        await sleep(50);
      }
    })();
    const istBefore = (cluster.log(1).match(/IST received/g) ?? []).length;
    const healedAt = Date.now();
    await cluster.healNode(1);
    await routedTo('node1');
    const backInRotationMs = Date.now() - healedAt;
    await sleep(3000);
    sampling = false;
    await sampler;
    await writes.stop();

    report('writer partitioned', writes, isolatedAt);
    const failures = writes.failures();
    expectOnlyQuick503s(failures);
    const afterHeal = failures.filter((answer) => answer.at >= healedAt);
    process.stdout.write(
      `writer partition healed: back in rotation ${backInRotationMs} ms after the heal began, ` +
        `${afterHeal.length} requests failed after it, state transfer: ` +
        `${(cluster.log(1).match(/IST received/g) ?? []).length > istBefore ? 'IST' : 'SST'}\n`,
    );
    expect(errorWindowMs(failures, isolatedAt)).toBeLessThan(10_000);
    expect(
      writes.answers.filter((answer) => answer.at > isolatedAt + 10_000 && answer.status === 200).length,
    ).toBeGreaterThan(20);
    expect(afterHeal).toEqual([]);
    expect(writes.staleReads).toEqual([]);
    expect(routedWhileNotSynced).toEqual([]);

    // Every acknowledged create is on the majority, and on node 1 once it has rejoined.
    for (const node of [2, 3, 1]) expect(await missingOn(node, writes.acknowledged)).toEqual([]);
    const checksums = await Promise.all(
      [1, 2, 3].map(async (node) => {
        const [row] = await cluster.onNode<{ Checksum: string }[]>(
          node,
          `SET STATEMENT wsrep_sync_wait = 1 FOR CHECKSUM TABLE \`${DB}\`.plants`,
        );
        return row.Checksum;
      }),
    );
    expect(new Set(checksums).size).toBe(1);
  });

  it('goes on without an error when a backup node is partitioned away, and after it rejoins (writes pause until the cluster has evicted it)', async () => {
    const writes = load();
    await sleep(1000);
    const isolatedAt = Date.now();
    await cluster.isolateNode(3);
    await sleep(3000);
    await cluster.healNode(3);
    await sleep(1000);
    await writes.stop();
    report('backup partitioned', writes, isolatedAt);
    // Commits wait until the others have evicted the silent node (evs.suspect_timeout, 3 s here,
    // then a new view): a pause, which a statement outlasting DB_QUERY_TIMEOUT_MS turns into a 503.
    // Only requests that were waiting when it began can fail so, one per writer at most.
    const failures = writes.failures();
    expectOnlyQuick503s(failures);
    expect(failures.length).toBeLessThanOrEqual(4);
    expect(failures.filter((answer) => answer.at > isolatedAt + 1000)).toEqual([]);
    expect(writes.staleReads).toEqual([]);
    expect(await missingOn(3, writes.acknowledged)).toEqual([]);
  });

  it('takes a desynced node (as a donor is) out of rotation and puts it back, with errors only at the switch', async () => {
    const writes = load();
    await sleep(1000);
    const desyncedAt = Date.now();
    await cluster.onNode(1, 'SET GLOBAL wsrep_desync = ON');
    await routedTo('node2');
    const switchedAt = Date.now();
    await sleep(2000);
    await cluster.onNode(1, 'SET GLOBAL wsrep_desync = OFF');
    await routedTo('node1');
    const backAt = Date.now();
    await sleep(2000);
    await writes.stop();

    report('writer desynced', writes, desyncedAt);
    const failures = writes.failures();
    expectOnlyQuick503s(failures);
    // Only requests in flight on node 1's connections when HAProxy closed them: one per writer at most.
    expect(failures.length).toBeLessThanOrEqual(4);
    expect(failures.filter((answer) => answer.at > switchedAt)).toEqual([]);
    expect(writes.answers.filter((answer) => answer.at > backAt && answer.status !== 200)).toEqual([]);
    expect(writes.staleReads).toEqual([]);
  });

  it('takes the writer out of rotation while it is the donor of a full state transfer (SST), and puts it back after', async () => {
    // Losing node 3 pauses commits until the others have evicted it: not what this test measures.
    await cluster.killNode(3);
    await cluster.wipeNode(3);
    await waitFor(async () => (await clusterSize(1)) === 2, { what: 'node 3 evicted', timeoutMs: 15_000 });
    const writes = load();
    await sleep(1000);
    const watch = watchCluster(cluster);
    const transferAt = Date.now();
    // Node 3 would take its transfer from node 2 (the donor preference); force the writer.
    await cluster.startNode(3, '--wsrep-sst-donor=node1');
    await routedTo('node1');
    const backAt = Date.now();
    await sleep(2000);
    await watch.stop();
    await writes.stop();

    report('writer a donor (SST)', writes, transferAt, watch.changes);
    expect(cluster.log(1)).toMatch(/Shifting SYNCED -> DONOR\/DESYNCED/);
    const switchedAt = watch.changes.find((c) => c.routed === 'node2')?.at;
    expect(switchedAt).toBeDefined();
    const failures = writes.failures();
    expectOnlyQuick503s(failures);
    // Writes held by the donor's lock when HAProxy closes its connections fail: the service cannot
    // tell whether a write cut off so committed. That is all: none before the transfer began, none
    // sent once HAProxy routes to a backup. How many depends on how long the lock held them before
    // HAProxy's checks took the writer out (usually one per writer, or none).
    expect(failures.filter((answer) => answer.at < transferAt || answer.at > switchedAt!)).toEqual([]);
    expect(writes.answers.filter((answer) => answer.at > backAt && answer.status !== 200)).toEqual([]);
    expect(writes.staleReads).toEqual([]);
    expect(await missingOn(3, writes.acknowledged)).toEqual([]);
  });

  it('answers every request with a prompt 503 while no primary component exists, readiness says why, and serves again by itself once one forms', async () => {
    const writes = load();
    await sleep(1000);
    const isolatedAt = Date.now();
    await Promise.all([cluster.isolateNode(1), cluster.isolateNode(2)]);
    await waitFor(async () => (await cluster.routedTo()) === null, {
      what: 'HAProxy routing nowhere',
      timeoutMs: 10_000,
    });
    const noneAt = Date.now();
    await sleep(3000);

    const ready = await a.http().get('/health/ready');
    expectErrorBody(ready, 503);
    expect(ready.body.message).toMatch(/database/);
    const started = Date.now();
    expectErrorBody(await a.http().get('/plants').set(bearer(token)), 503);
    expect(Date.now() - started).toBeLessThan(1000);

    const healedAt = Date.now();
    await Promise.all([cluster.healNode(1), cluster.healNode(2)]);
    await waitFor(async () => (await a.http().get('/plants?limit=1').set(bearer(token))).status === 200, {
      what: 'the instance serving again',
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    process.stdout.write(`no primary component: serving again ${Date.now() - healedAt} ms after the heal began\n`);
    await sleep(1000);
    await writes.stop();

    report('no primary component', writes, isolatedAt);
    const failures = writes.failures();
    expectOnlyQuick503s(failures);
    // Requests in flight when the nodes lost the primary component failed once they noticed: no
    // wait for a connection (HAProxy refuses at once when it has no node), one statement wait at most.
    expect(
      failures.filter((answer) => answer.ms >= QUERY_TIMEOUT_MS + STATEMENT_RETRY_DEFAULTS.windowMs + 500),
    ).toEqual([]);
    // Once HAProxy has no node to route to, a request fails at once instead of waiting for a timeout.
    const meanwhile = failures.filter((answer) => answer.at > noneAt + 500 && answer.at < healedAt);
    expect(meanwhile.length).toBeGreaterThan(0);
    expect(meanwhile.filter((answer) => answer.ms > 1000)).toEqual([]);
    expect(
      writes.answers.filter((answer) => answer.at > noneAt && answer.at < healedAt && answer.status === 200),
    ).toEqual([]);
    expect(writes.staleReads).toEqual([]);
    for (const node of [1, 2, 3]) expect(await missingOn(node, writes.acknowledged)).toEqual([]);
    expect((await a.http().get('/health/ready')).status).toBe(200);
  });

  it('answers 503 only while HAProxy restarts, and serves again once it is back', async () => {
    const writes = load();
    await sleep(1000);
    const restartedAt = Date.now();
    await cluster.restartHaproxy();
    const upAt = Date.now();
    await sleep(3000);
    await writes.stop();
    report('HAProxy restarted', writes, restartedAt);
    const failures = writes.failures();
    expectOnlyQuick503s(failures);
    expect(failures.filter((answer) => answer.at > upAt)).toEqual([]);
    expect(writes.staleReads).toEqual([]);
  });
});
