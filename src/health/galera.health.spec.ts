import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { GaleraHealthIndicator } from './galera.health';

function indicatorOn(type: string, query: jest.Mock) {
  return new GaleraHealthIndicator({ options: { type }, query } as unknown as DataSource, new HealthIndicatorService());
}
const status = (ready: string, state: string, cluster = 'Primary') => [
  { Variable_name: 'wsrep_cluster_status', Value: cluster },
  { Variable_name: 'wsrep_local_state', Value: state },
  { Variable_name: 'wsrep_ready', Value: ready },
];

describe(GaleraHealthIndicator.name, () => {
  it('applies on a Galera node, asking once', async () => {
    const query = jest.fn().mockResolvedValue([{ wsrep_on: '1' }]);
    const galera = indicatorOn('mariadb', query);
    await expect(galera.applies(1000)).resolves.toBe(true);
    await expect(galera.applies(1000)).resolves.toBe(true);
    expect(query).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['plain MariaDB', 'mariadb', jest.fn().mockResolvedValue([{ wsrep_on: '0' }])],
    ['MySQL', 'mysql', jest.fn().mockRejectedValue({ driverError: { errno: 1193 } })],
    ['SQLite', 'better-sqlite3', jest.fn()],
  ])('does not apply on %s', async (_name, type, query) => {
    await expect(indicatorOn(type, query).applies(1000)).resolves.toBe(false);
  });

  it('asks again after the server could not answer, and gives up waiting after the timeout', async () => {
    const query = jest
      .fn()
      .mockRejectedValueOnce({ code: 'ECONNREFUSED' })
      .mockReturnValueOnce(new Promise(() => undefined));
    const galera = indicatorOn('mariadb', query);
    await expect(galera.applies(1000)).resolves.toBe(false);
    await expect(galera.applies(10)).resolves.toBe(false);
    expect(query).toHaveBeenCalledTimes(2);
  });

  it("is up only when the node is in the primary component, synced (state 4) and ready; an unanswered question is the database check's", async () => {
    const query = jest.fn();
    const galera = indicatorOn('mariadb', query);
    query.mockResolvedValueOnce(status('ON', '4'));
    await expect(galera.check('cluster')).resolves.toEqual({ cluster: { status: 'up' } });
    query.mockResolvedValueOnce(status('OFF', '1'));
    await expect(galera.check('cluster')).resolves.toEqual({ cluster: { status: 'down' } });
    query.mockResolvedValueOnce(status('ON', '2'));
    await expect(galera.check('cluster')).resolves.toEqual({ cluster: { status: 'down' } });
    query.mockResolvedValueOnce(status('ON', '4', 'non-Primary'));
    await expect(galera.check('cluster')).resolves.toEqual({ cluster: { status: 'down' } });
    query.mockRejectedValueOnce(new Error('lost'));
    await expect(galera.check('cluster')).resolves.toEqual({ cluster: { status: 'up' } });
  });
});
