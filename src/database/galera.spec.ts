import { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { GALERA_SYNC_WAIT, prepareGaleraSessions } from './galera';

/** `server` records what reaches the server; `query` is what the driver calls (and may be wrapped). */
function fakeConnection() {
  const server = jest.fn((_sql: string, callback: (error: unknown) => void) => callback(null));
  return { server, query: (sql: string, callback: (error: unknown) => void): unknown => server(sql, callback) };
}

function fakeDataSource(type: string, wsrepOn: () => Promise<unknown>) {
  const open = [fakeConnection(), fakeConnection()];
  const pool = Object.assign(new EventEmitter(), { _allConnections: { toArray: () => open } });
  const dataSource = { options: { type }, driver: { pool }, query: jest.fn(wsrepOn) } as unknown as DataSource;
  return { dataSource, pool, open };
}

const SET = `SET SESSION wsrep_sync_wait = ${GALERA_SYNC_WAIT}`;

describe('prepareGaleraSessions', () => {
  it('on a Galera node, sets causal reads on every open connection and on each new one before its first statement', async () => {
    const { dataSource, pool, open } = fakeDataSource('mariadb', async () => [{ wsrep_on: '1' }]);
    await expect(prepareGaleraSessions(dataSource)).resolves.toBe(true);
    for (const connection of open) expect(connection.server).toHaveBeenCalledWith(SET, expect.any(Function));
    const fresh = fakeConnection();
    pool.emit('connection', fresh);
    expect(fresh.server).toHaveBeenCalledWith(SET, expect.any(Function));
  });

  it('sets it again after a failed statement, before the next one, and not after a successful one', async () => {
    const { dataSource, open } = fakeDataSource('mariadb', async () => [{ wsrep_on: '1' }]);
    await prepareGaleraSessions(dataSource);
    const [connection] = open;
    const sent = () => connection.server.mock.calls.map(([sql]) => sql);
    connection.server.mockClear();
    connection.server.mockImplementation((sql: string, callback: (error: unknown) => void) =>
      callback(sql.startsWith('INSERT') ? Object.assign(new Error('Deadlock found'), { errno: 1213 }) : null),
    );
    const outcomes: unknown[] = [];
    connection.query('DELETE FROM plants', (error: unknown) => outcomes.push(error));
    expect(sent()).toEqual(['DELETE FROM plants']);
    connection.query('INSERT INTO plants', (error: unknown) => {
      // Queued before the caller hears of the failure, so before whatever it sends next.
      expect(sent()).toEqual(['DELETE FROM plants', 'INSERT INTO plants', SET]);
      outcomes.push(error);
    });
    expect(outcomes).toEqual([null, expect.objectContaining({ errno: 1213 })]);
  });

  it.each([
    ['plain MariaDB (wsrep off)', 'mariadb', async () => [{ wsrep_on: '0' }]],
    [
      'MySQL (no such variable)',
      'mysql',
      () => Promise.reject(Object.assign(new Error('Unknown system variable'), { errno: 1193 })),
    ],
  ])('changes nothing on %s', async (_name, type, answer) => {
    const { dataSource, pool, open } = fakeDataSource(type, answer);
    await expect(prepareGaleraSessions(dataSource)).resolves.toBe(false);
    expect(pool.listenerCount('connection')).toBe(0);
    for (const connection of open) expect(connection.server).not.toHaveBeenCalled();
  });

  it('does not ask SQLite at all', async () => {
    const { dataSource } = fakeDataSource('better-sqlite3', async () => []);
    await expect(prepareGaleraSessions(dataSource)).resolves.toBe(false);
    expect(dataSource.query).not.toHaveBeenCalled();
  });
});
