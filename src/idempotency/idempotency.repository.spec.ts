import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { QueryResult } from 'typeorm';
import { IdempotencyRepository } from './idempotency.repository';

const affected = (count: number) => Object.assign(new QueryResult(), { affected: count });
const ref = { owner: 'alice', key: 'k-1' };

async function build(type: 'mysql' | 'better-sqlite3') {
  const runner = { query: jest.fn().mockResolvedValue(affected(1)), release: jest.fn().mockResolvedValue(undefined) };
  const dataSource = { options: { type }, createQueryRunner: jest.fn(() => runner), query: jest.fn() };
  const moduleRef = await Test.createTestingModule({
    providers: [IdempotencyRepository, { provide: getDataSourceToken(), useValue: dataSource }],
  }).compile();
  return { repository: moduleRef.get(IdempotencyRepository), runner, dataSource };
}

describe(IdempotencyRepository.name, () => {
  it('takes a key with one INSERT, keeping the row at least as long as the lease', async () => {
    const { repository, runner } = await build('mysql');
    await expect(repository.insert(ref, 'f', 'c', 30_000, 1000)).resolves.toBe(true);
    expect(runner.query).toHaveBeenCalledTimes(1);
    expect(runner.query.mock.calls[0][0]).toMatch(/^INSERT INTO idempotency_keys/);
    expect(runner.query.mock.calls[0][1]).toEqual(['alice', 'k-1', 'f', 'c', 30_000, 30_000]);
  });

  it('reports a key that exists already as false, and any other failure as it is', async () => {
    const { repository, runner } = await build('better-sqlite3');
    runner.query.mockRejectedValueOnce({ driverError: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' } });
    await expect(repository.insert(ref, 'f', 'c', 30_000, 1000)).resolves.toBe(false);
    const error = { code: 'SQLITE_FULL' };
    runner.query.mockRejectedValueOnce(error);
    await expect(repository.insert(ref, 'f', 'c', 30_000, 1000)).rejects.toBe(error);
  });

  it('reads a row with the clock comparisons made by the database', async () => {
    const { repository, dataSource } = await build('mysql');
    dataSource.query.mockResolvedValue([
      { fingerprint: 'f', status_code: 409, response: '{}', lease_expired: '0', expired: 1n },
    ]);
    await expect(repository.find(ref)).resolves.toEqual({
      fingerprint: 'f',
      statusCode: 409,
      response: '{}',
      leaseExpired: false,
      expired: true,
    });
    dataSource.query.mockResolvedValue([]);
    await expect(repository.find(ref)).resolves.toBeUndefined();
  });

  it('completes only while the request still holds the key', async () => {
    const { repository, runner } = await build('mysql');
    runner.query.mockResolvedValue(affected(0));
    await expect(repository.complete(ref, 'c', { statusCode: 200, response: '{}' }, 1000)).resolves.toBe(false);
    expect(runner.query.mock.calls[0][0]).toMatch(/WHERE owner = \? AND idem_key = \? AND claim = \?$/);
  });

  it.each([
    ['mysql', /ORDER BY expires_at LIMIT \?$/],
    ['better-sqlite3', /WHERE rowid IN \(SELECT rowid .* LIMIT \?\)$/],
  ] as const)('purges a bounded batch on %s', async (type, shape) => {
    const { repository, runner } = await build(type);
    runner.query.mockResolvedValue(affected(7));
    await expect(repository.purgeExpired(1000)).resolves.toBe(7);
    expect(runner.query.mock.calls[0][0]).toMatch(shape);
    expect(runner.query.mock.calls[0][1]).toEqual([1000]);
  });
});
