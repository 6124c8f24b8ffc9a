import { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { GALERA_SYNC_WAIT, prepareGaleraSessions } from './galera';

function fakeConnection() {
  return { query: jest.fn((_sql: string, callback: (error: unknown) => void) => callback(null)) };
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
    for (const connection of open) expect(connection.query).toHaveBeenCalledWith(SET, expect.any(Function));
    const fresh = fakeConnection();
    pool.emit('connection', fresh);
    expect(fresh.query).toHaveBeenCalledWith(SET, expect.any(Function));
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
    for (const connection of open) expect(connection.query).not.toHaveBeenCalled();
  });

  it('does not ask SQLite at all', async () => {
    const { dataSource } = fakeDataSource('better-sqlite3', async () => []);
    await expect(prepareGaleraSessions(dataSource)).resolves.toBe(false);
    expect(dataSource.query).not.toHaveBeenCalled();
  });
});
