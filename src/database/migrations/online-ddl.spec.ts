import { QueryRunner } from 'typeorm';
import { LARGE_TABLE_CHANGE, changeLargeTable } from './online-ddl';

function fakeQueryRunner(data?: Record<string, unknown>) {
  const query = jest.fn(async (_sql: string) => []);
  return { queryRunner: { query, data } as unknown as QueryRunner, query };
}

describe('changeLargeTable', () => {
  it('takes the way the migration runner gave for this server', async () => {
    const way = jest.fn(async () => undefined);
    const { queryRunner, query } = fakeQueryRunner({ [LARGE_TABLE_CHANGE]: way });
    await changeLargeTable(queryRunner, 'plants', 'ADD INDEX i (name)');
    expect(way).toHaveBeenCalledWith(queryRunner, 'plants', 'ADD INDEX i (name)');
    expect(query).not.toHaveBeenCalled();
  });

  it('without one, alters the table as on one server, its metadata-lock wait bounded', async () => {
    const { queryRunner, query } = fakeQueryRunner();
    await changeLargeTable(queryRunner, 'plants', 'ADD INDEX i (name)');
    expect(query.mock.calls.map(([sql]) => sql)).toEqual([
      'SET SESSION lock_wait_timeout = 2',
      'ALTER TABLE plants ADD INDEX i (name)',
      'SET SESSION lock_wait_timeout = DEFAULT',
    ]);
  });
});
