import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Registry } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import { DatabaseMetrics, PROBE_TIMEOUT_MS } from './database.metrics';
import { STATEMENT_RETRIES } from './statement-retry';

const GALERA_STATUS = [
  { Variable_name: 'wsrep_cluster_size', Value: '3' },
  { Variable_name: 'wsrep_cluster_status', Value: 'Primary' },
  { Variable_name: 'wsrep_local_state', Value: '4' },
  { Variable_name: 'wsrep_ready', Value: 'ON' },
];

describe(DatabaseMetrics.name, () => {
  let registry: Registry;
  let query: jest.Mock;
  let close: () => Promise<void>;

  /** `dataSource`: what else of the data source the gauges read (its driver's pool). */
  async function start(type: string, dataSource: object = {}): Promise<void> {
    registry = new Registry();
    const moduleRef = await Test.createTestingModule({
      providers: [
        DatabaseMetrics,
        { provide: MetricsService, useValue: { registry } },
        { provide: getDataSourceToken(), useValue: { options: { type }, query, ...dataSource } },
      ],
    }).compile();
    await moduleRef.init();
    close = () => moduleRef.close();
  }
  afterEach(() => close());

  /** The sample lines of one scrape whose name starts with `prefix`. */
  const scrape = async (prefix: string) =>
    (await registry.metrics()).split('\n').filter((line) => line.startsWith(prefix));

  /** A server answering the Galera questions as `wsrep_on` says, and `SELECT 1`. */
  const server = (wsrepOn: number, status = GALERA_STATUS) =>
    jest.fn(async (sql: string) => {
      if (sql.includes('@@wsrep_on')) return [{ wsrep_on: wsrepOn, cluster: 'plant-store' }];
      if (sql.includes('SHOW STATUS')) return status;
      return [{ 1: 1 }];
    });

  it('reports the database up, with the round trip of a statement sent at scrape time', async () => {
    query = server(0);
    await start('better-sqlite3');
    const [up] = await scrape('db_up');
    expect(up).toBe('db_up 1');
    const [roundTrip] = await scrape('db_round_trip_seconds');
    const seconds = Number(roundTrip.split(' ')[1]);
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThan(PROBE_TIMEOUT_MS / 1000);
    // Two scrapes, one statement each: both gauges of a scrape share it.
    expect(query.mock.calls.filter(([sql]) => sql === 'SELECT 1')).toHaveLength(2);
  });

  it('reports the database down when the statement fails, or is not answered in time', async () => {
    query = jest.fn().mockRejectedValue(new Error('connect ECONNREFUSED'));
    await start('better-sqlite3');
    await expect(scrape('db_')).resolves.toEqual(['db_up 0', 'db_round_trip_seconds Nan']);
    query.mockReturnValue(new Promise(() => undefined));
    const started = Date.now();
    await expect(scrape('db_up')).resolves.toEqual(['db_up 0']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
  });

  it('counts each retry by its reason while the module lives', async () => {
    query = server(0);
    await start('better-sqlite3');
    STATEMENT_RETRIES.publish({ reason: 'deadlock' });
    STATEMENT_RETRIES.publish({ reason: 'deadlock' });
    STATEMENT_RETRIES.publish({ reason: 'connection' });
    await expect(scrape('db_statement_retries_total')).resolves.toEqual([
      'db_statement_retries_total{reason="deadlock"} 2',
      'db_statement_retries_total{reason="connection"} 1',
    ]);
    await close();
    close = async () => undefined;
    expect(STATEMENT_RETRIES.hasSubscribers).toBe(false);
  });

  it("reports a Galera node's state, labelled with its cluster", async () => {
    query = server(1);
    await start('mariadb');
    await expect(scrape('db_galera_')).resolves.toEqual([
      'db_galera_cluster_primary{cluster="plant-store"} 1',
      'db_galera_local_state{cluster="plant-store"} 4',
      'db_galera_ready{cluster="plant-store"} 1',
      'db_galera_cluster_size{cluster="plant-store"} 3',
    ]);
    query.mockImplementation(
      server(1, [
        { Variable_name: 'wsrep_cluster_size', Value: '1' },
        { Variable_name: 'wsrep_cluster_status', Value: 'non-Primary' },
        { Variable_name: 'wsrep_local_state', Value: '1' },
        { Variable_name: 'wsrep_ready', Value: 'OFF' },
      ]),
    );
    await expect(scrape('db_galera_')).resolves.toEqual([
      'db_galera_cluster_primary{cluster="plant-store"} 0',
      'db_galera_local_state{cluster="plant-store"} 1',
      'db_galera_ready{cluster="plant-store"} 0',
      'db_galera_cluster_size{cluster="plant-store"} 1',
    ]);
  });

  it('shows no Galera sample for plain MariaDB, MySQL (asking once) or SQLite', async () => {
    query = server(0);
    await start('mariadb');
    await expect(scrape('db_galera_')).resolves.toEqual([]);
    await close();

    query = jest.fn(async (sql: string) => {
      if (sql.includes('@@wsrep_on')) throw Object.assign(new Error('Unknown system variable'), { errno: 1193 });
      return [{ 1: 1 }];
    });
    await start('mysql');
    await scrape('db_galera_');
    await expect(scrape('db_galera_')).resolves.toEqual([]);
    expect(query.mock.calls.filter(([sql]) => sql.includes('@@wsrep_on'))).toHaveLength(1);
    await close();

    query = server(1);
    await start('better-sqlite3');
    await expect(scrape('db_galera_')).resolves.toEqual([]);
  });

  describe('pool gauges', () => {
    beforeEach(() => (query = server(0)));

    /** A mysql2 pool as the gauges read it (mysql2 keeps these in Denque queues with a length). */
    const mysqlPool = (open: number, idle: number, waiting: number, limit?: number) => ({
      _allConnections: { length: open },
      _freeConnections: { length: idle },
      _connectionQueue: { length: waiting },
      config: limit === undefined ? {} : { connectionLimit: limit },
    });

    it('read the connections of a mysql2 pool: in use, idle, the maximum and the waiting queries', async () => {
      await start('mysql', { isInitialized: true, driver: { pool: mysqlPool(7, 2, 3, 10) } });
      expect(await scrape('db_pool_')).toEqual([
        'db_pool_connections{state="in_use"} 5',
        'db_pool_connections{state="idle"} 2',
        'db_pool_connections{state="max"} 10',
        'db_pool_waiting_requests 3',
      ]);
    });

    it('follow the pool as it changes', async () => {
      const pool = mysqlPool(1, 1, 0, 4);
      await start('mysql', { isInitialized: true, driver: { pool } });
      expect(await scrape('db_pool_connections{state="in_use"}')).toEqual(['db_pool_connections{state="in_use"} 0']);
      pool._allConnections = { length: 4 };
      pool._freeConnections = { length: 0 };
      pool._connectionQueue = { length: 6 };
      expect(await scrape('db_pool_')).toEqual([
        'db_pool_connections{state="in_use"} 4',
        'db_pool_connections{state="idle"} 0',
        'db_pool_connections{state="max"} 4',
        'db_pool_waiting_requests 6',
      ]);
    });

    it('leave out the maximum when the pool does not say it', async () => {
      await start('mysql', { isInitialized: true, driver: { pool: mysqlPool(3, 1, 0) } });
      expect(await scrape('db_pool_connections')).toEqual([
        'db_pool_connections{state="in_use"} 2',
        'db_pool_connections{state="idle"} 1',
      ]);
    });

    it('are absent for SQLite, whose driver has no pool', async () => {
      await start('better-sqlite3', { isInitialized: true, driver: { databaseConnection: {} } });
      expect(await scrape('db_pool_')).toEqual([]);
    });

    it('report no connections before the data source is initialized', async () => {
      await start('mysql', { isInitialized: false, driver: { pool: mysqlPool(1, 1, 0, 10) } });
      expect(await scrape('db_pool_connections')).toEqual([]);
    });
  });
});
