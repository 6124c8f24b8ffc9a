import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { CannotExecuteNotConnectedError, QueryFailedError, QueryResult } from 'typeorm';
import { PLANT_STATEMENTS, PlantsRepository, toPlantDto } from './plants.repository';

/** Rows as the drivers return them: MySQL gives BIGINT as a decimal string, SQLite as a BigInt. */
function rows(...ids: bigint[]): QueryResult {
  return Object.assign(new QueryResult(), {
    records: ids.map((id, i) => ({
      id: i % 2 === 0 ? String(id) : id,
      name: `plant ${id}`,
      tag: id % 2n === 0n ? 'even' : null,
    })),
  });
}

const affected = (count: number | undefined) => Object.assign(new QueryResult(), { affected: count });

describe(PlantsRepository.name, () => {
  let repository: PlantsRepository;
  let runner: { query: jest.Mock; release: jest.Mock };
  let dataSource: { isInitialized: boolean; createQueryRunner: jest.Mock };

  beforeEach(async () => {
    runner = { query: jest.fn().mockResolvedValue(affected(1)), release: jest.fn().mockResolvedValue(undefined) };
    dataSource = { isInitialized: true, createQueryRunner: jest.fn(() => runner) };
    const moduleRef = await Test.createTestingModule({
      providers: [PlantsRepository, { provide: getDataSourceToken(), useValue: dataSource }],
    }).compile();
    repository = moduleRef.get(PlantsRepository);
  });

  describe('insert', () => {
    it('sends one INSERT with the exact id and returns the plant', async () => {
      const id = 9223372036854775807n;
      await expect(repository.insert({ owner: 'alice', id, name: 'Fern', tag: 'green' })).resolves.toStrictEqual({
        id,
        name: 'Fern',
        tag: 'green',
      });
      expect(runner.query).toHaveBeenCalledTimes(1);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.insert, ['alice', id, 'Fern', 'green'], true);
      expect(runner.query.mock.calls[0][1][1]).toBe(id);
      expect(runner.release).toHaveBeenCalledTimes(1);
    });

    it('with a write alongside, runs the same INSERT and that write in one transaction', async () => {
      const manager = { query: jest.fn().mockResolvedValue([]) };
      const transaction = jest.fn(async (work: (m: typeof manager) => Promise<void>) => work(manager));
      Object.assign(dataSource, { transaction });
      const alongside = jest.fn().mockResolvedValue(undefined);
      await repository.insert({ owner: 'alice', id: 7n, name: 'Fern' }, alongside);
      expect(transaction).toHaveBeenCalledTimes(1);
      expect(manager.query).toHaveBeenCalledWith(PLANT_STATEMENTS.insert, ['alice', 7n, 'Fern', null]);
      expect(alongside).toHaveBeenCalledWith(manager);
      expect(runner.query).not.toHaveBeenCalled();
    });

    it('runs the whole transaction again after a deadlock, and reports a closed data source as not connected', async () => {
      const manager = { query: jest.fn().mockResolvedValue([]) };
      const transaction = jest
        .fn()
        .mockRejectedValueOnce({ code: 'ER_LOCK_DEADLOCK' })
        .mockImplementation(async (work: (m: typeof manager) => Promise<void>) => work(manager));
      Object.assign(dataSource, { transaction });
      await repository.insert({ owner: 'alice', id: 7n, name: 'Fern' }, jest.fn());
      expect(transaction).toHaveBeenCalledTimes(2);

      transaction.mockReset().mockRejectedValue(new TypeError('closed'));
      dataSource.isInitialized = false;
      await expect(repository.insert({ owner: 'alice', id: 7n, name: 'Fern' }, jest.fn())).rejects.toBeInstanceOf(
        CannotExecuteNotConnectedError,
      );
    });

    it.each([
      ['absent', {}],
      ['null', { tag: null }],
    ])('stores a tag that is %s as NULL and leaves it out of the plant', async (_label, tag) => {
      const plant = await repository.insert({ owner: 'alice', id: 8n, name: 'Moss', ...tag });
      expect(plant).toStrictEqual({ id: 8n, name: 'Moss' });
      expect(plant).not.toHaveProperty('tag');
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.insert, ['alice', 8n, 'Moss', null], true);
    });

    it('passes the driver error on and releases the runner', async () => {
      const error = Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' });
      runner.query.mockRejectedValue(error);
      await expect(repository.insert({ owner: 'alice', id: 7n, name: 'Fern' })).rejects.toBe(error);
      expect(runner.release).toHaveBeenCalledTimes(1);
    });
  });

  describe('page', () => {
    it('reads the first page of the owner in id order', async () => {
      runner.query.mockResolvedValue(rows());
      await expect(repository.page('alice', 3)).resolves.toEqual([]);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.firstPage, ['alice', 3], true);
    });

    it('starts after the cursor, which it passes on exactly', async () => {
      runner.query.mockResolvedValue(rows());
      await repository.page('alice', 3, 9223372036854775806n);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.pageAfter, ['alice', 9223372036854775806n, 3], true);
    });

    it('maps string and BigInt ids to exact bigints and leaves a NULL tag out', async () => {
      runner.query.mockResolvedValue(rows(9223372036854775806n, 9223372036854775807n, 1n));
      await expect(repository.page('alice', 3)).resolves.toStrictEqual([
        { id: 9223372036854775806n, name: 'plant 9223372036854775806', tag: 'even' },
        { id: 9223372036854775807n, name: 'plant 9223372036854775807' },
        { id: 1n, name: 'plant 1' },
      ]);
    });

    it('releases the query runner when the statement fails', async () => {
      const error = new Error('connection lost');
      runner.query.mockRejectedValue(error);
      await expect(repository.page('alice', 3)).rejects.toBe(error);
      expect(runner.release).toHaveBeenCalledTimes(1);
    });
  });

  describe('delete', () => {
    it('sends one DELETE scoped to the owner and says a row went', async () => {
      await expect(repository.delete('alice', 5n)).resolves.toBe(true);
      expect(runner.query).toHaveBeenCalledTimes(1);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.delete, ['alice', 5n], true);
    });

    it.each([0, undefined])('says nothing went when affected=%p', async (count) => {
      runner.query.mockResolvedValue(affected(count));
      await expect(repository.delete('alice', 5n)).resolves.toBe(false);
    });
  });

  describe('on a conflict or a node not ready (Galera)', () => {
    const deadlock = () => Object.assign(new Error('Deadlock found'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });

    it.each([
      ['insert', () => repository.insert({ owner: 'alice', id: 7n, name: 'Fern' })],
      ['page', () => repository.page('alice', 3)],
      ['delete', () => repository.delete('alice', 5n)],
    ])(
      'runs the %s again after a deadlock (a lost certification), on a fresh runner each time',
      async (_label, call) => {
        runner.query.mockRejectedValueOnce(deadlock()).mockResolvedValueOnce(affected(1));
        await call();
        expect(runner.query).toHaveBeenCalledTimes(2);
        expect(runner.release).toHaveBeenCalledTimes(2);
      },
    );

    it('runs a write again after a lost connection only if it was never sent; a read in any case', async () => {
      const lost = () =>
        new QueryFailedError('sql', [], Object.assign(new Error('lost'), { code: 'PROTOCOL_CONNECTION_LOST' }));
      runner.query.mockRejectedValueOnce(lost()).mockResolvedValueOnce(affected(1));
      await expect(repository.insert({ owner: 'alice', id: 7n, name: 'Fern' })).rejects.toBeInstanceOf(
        QueryFailedError,
      );
      runner.query.mockReset().mockRejectedValueOnce(lost()).mockResolvedValueOnce(affected(1));
      await expect(repository.page('alice', 3)).resolves.toEqual([]);
    });
  });

  describe('on a closed data source', () => {
    it.each([
      [
        'a query that fails',
        () => runner.query.mockRejectedValue(new TypeError('The database connection is not open')),
      ],
      [
        'a runner that cannot be made',
        () =>
          dataSource.createQueryRunner.mockImplementation(() => {
            throw new TypeError("Cannot read properties of undefined (reading 'manager')");
          }),
      ],
    ])("reports %s as TypeORM's not-connected error", async (_label, fail) => {
      dataSource.isInitialized = false;
      fail();
      await expect(repository.page('alice', 3)).rejects.toBeInstanceOf(CannotExecuteNotConnectedError);
    });

    it('passes errors on unchanged while the data source is open', async () => {
      const error = new TypeError('The database connection is not open');
      runner.query.mockRejectedValue(error);
      await expect(repository.delete('alice', 5n)).rejects.toBe(error);
    });
  });
});

describe(toPlantDto.name, () => {
  it('leaves out a null or missing tag', () => {
    expect(toPlantDto({ id: 1n, name: 'a', tag: null })).toStrictEqual({ id: 1n, name: 'a' });
    expect(toPlantDto({ id: 1n, name: 'a' })).toStrictEqual({ id: 1n, name: 'a' });
  });

  it('keeps a tag', () => {
    expect(toPlantDto({ id: 1n, name: 'a', tag: 'b' })).toStrictEqual({ id: 1n, name: 'a', tag: 'b' });
  });
});
