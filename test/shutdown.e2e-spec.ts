import { expectedPlant } from './utils/bodies';
import { mysqlConnection, prepareDatabase, testDatabases } from './utils/databases';
import { createTokenWithCli, startServiceProcess } from './utils/service-process';
import { waitFor } from './utils/wait-for';

const json = { 'Content-Type': 'application/json' };

/**
 * SIGTERM as an orchestrator sends it: the instance stops taking work, finishes what it has,
 * closes its database last and exits 0; nothing it acknowledged is lost.
 */
describe.each(testDatabases())('Graceful shutdown on %s', (database) => {
  let env: Record<string, string>;
  let token: string;
  const auth = () => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    env = (await prepareDatabase(database)).env;
    token = await createTokenWithCli(env, `shutdown-${database}-${Date.now()}`);
  }, 60_000);

  async function listAll(url: string): Promise<bigint[]> {
    const ids: bigint[] = [];
    let next: URL | null = new URL(`${url}/plants?limit=1000`);
    while (next) {
      const res: Response = await fetch(next, { headers: auth() });
      expect(res.status).toBe(200);
      const text = await res.text();
      ids.push(...[...text.matchAll(/"id":(-?\d+)/g)].map((m) => BigInt(m[1])));
      const link = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
      next = link === undefined ? null : new URL(link, next);
    }
    return ids;
  }

  it('keeps every acknowledged create when SIGTERM arrives under write load, and exits 0', async () => {
    const service = await startServiceProcess(env);
    const acknowledged: bigint[] = [];
    const failures: string[] = [];
    let nextId = 1_000_000n;
    let stop = false;

    // 16 writers, each sending creates one after another until the service goes away.
    const writer = async () => {
      while (!stop) {
        const id = nextId++;
        try {
          const res = await fetch(`${service.url}/plants`, {
            method: 'POST',
            headers: { ...auth(), ...json },
            body: `{"id":${id},"name":"Load ${id}"}`,
          });
          const body = await res.text();
          if (res.status === 200) acknowledged.push(id);
          else failures.push(`${res.status} ${body}`);
        } catch {
          return; // the listener is closed: this writer is done
        }
      }
    };
    const writers = Array.from({ length: 16 }, writer);
    await waitFor(() => acknowledged.length >= 200, {
      timeoutMs: 60_000,
      intervalMs: 10,
      what: '200 acknowledged creates',
    });

    service.child.kill('SIGTERM');
    const code = await service.exited;
    stop = true;
    await Promise.all(writers);

    expect(code).toBe(0);
    // Requests either completed normally or were never accepted; none was answered with an error.
    expect(failures).toEqual([]);
    expect(service.output()).toContain('readiness is now 503');
    expect(service.output()).toContain('"msg":"Stopped"');

    const restarted = await startServiceProcess(env);
    try {
      const stored = new Set((await listAll(restarted.url)).map(String));
      const lost = acknowledged.filter((id) => !stored.has(String(id)));
      expect(lost).toEqual([]);
      expect(acknowledged.length).toBeGreaterThanOrEqual(200);
    } finally {
      await restarted.stop();
    }
  }, 120_000);

  it('answers readiness 503 at once while still serving for SHUTDOWN_DELAY_MS', async () => {
    const service = await startServiceProcess({ ...env, SHUTDOWN_DELAY_MS: '1500' });
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);

    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    let ready: Response;
    do {
      ready = await fetch(`${service.url}/health/ready`);
    } while (ready.status === 200 && Date.now() - signalledAt < 1000);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ error: 503, message: 'Not ready: the instance is shutting down' });
    expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${service.url}/plants`, { headers: auth() })).status).toBe(200);

    expect(await service.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(1500);
    await expect(fetch(`${service.url}/health/live`)).rejects.toThrow();
  }, 60_000);

  (database === 'mysql' ? describe : describe.skip)('with a request held up in the database', () => {
    /** Holds a write lock on the plants table from another session, so the service's INSERT waits. */
    async function lockPlants(): Promise<{ insertWaiting: () => Promise<void>; release: () => Promise<void> }> {
      const connection = await mysqlConnection(env.DATABASE_URL);
      await connection.query('LOCK TABLES plants WRITE');
      return {
        /** Until another session's INSERT into plants is waiting for the lock. */
        insertWaiting: () =>
          waitFor(
            async () => {
              const [rows] = await connection.query(
                // This database's: other runs may share the server.
                "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = DATABASE() AND INFO LIKE 'INSERT INTO%plants%' AND STATE LIKE 'Waiting%'",
              );
              return Number((rows as Array<{ n: number | string }>)[0].n) > 0;
            },
            { timeoutMs: 10_000, intervalMs: 20, what: 'the INSERT waiting for the table lock' },
          ),
        release: async () => {
          await connection.query('UNLOCK TABLES');
          await connection.end();
        },
      };
    }

    it('lets an in-flight request finish after SIGTERM, then exits 0 with the write stored', async () => {
      const service = await startServiceProcess(env);
      const lock = await lockPlants();
      let released = false;
      try {
        const pending = fetch(`${service.url}/plants`, {
          method: 'POST',
          headers: { ...auth(), ...json },
          body: '{"id":77,"name":"In flight"}',
        });
        await lock.insertWaiting();
        service.child.kill('SIGTERM');
        await waitFor(() => service.output().includes('readiness is now 503'), {
          timeoutMs: 5000,
          what: 'shutdown under way',
        });
        expect(service.child.exitCode).toBeNull(); // still draining

        await lock.release();
        released = true;
        const res = await pending;
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual(expectedPlant({ id: 77, name: 'In flight' }));
        expect(await service.exited).toBe(0);
      } finally {
        if (!released) await lock.release();
        await service.stop();
      }
      const restarted = await startServiceProcess(env);
      try {
        expect(await listAll(restarted.url)).toContain(77n);
      } finally {
        await restarted.stop();
      }
    }, 60_000);

    it('cuts requests that outlive SHUTDOWN_TIMEOUT_MS, says so, and exits 1', async () => {
      const service = await startServiceProcess({ ...env, SHUTDOWN_TIMEOUT_MS: '500' });
      const lock = await lockPlants();
      try {
        const pending = fetch(`${service.url}/plants`, {
          method: 'POST',
          headers: { ...auth(), ...json },
          body: '{"id":78,"name":"Too slow"}',
        }).then(
          (res) => res.status,
          () => 'cut',
        );
        await lock.insertWaiting();
        service.child.kill('SIGTERM');
        expect(await pending).toBe('cut');
        await waitFor(() => service.output().includes('were cut'), { timeoutMs: 5000, what: 'the cut reported' });
        expect(service.output()).toContain('Requests still running after 500 ms were cut');
      } finally {
        await lock.release();
      }
      expect(await service.exited).toBe(1);
    }, 60_000);
  });
});
