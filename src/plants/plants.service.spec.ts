import { ConflictException, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { QueryFailedError, QueryResult } from 'typeorm';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PLANT_STATEMENTS, PlantsService, toPlantDto } from './plants.service';

const MAX_PAGE = 3;

function dto(fields: Partial<CreatePlantDto>): CreatePlantDto {
  return Object.assign(new CreatePlantDto(), fields);
}

/** Rows as the drivers return them: MySQL gives BIGINT as a decimal string, SQLite as a BigInt. */
function rows(...ids: bigint[]): QueryResult {
  return Object.assign(new QueryResult(), {
    records: ids.map((id, i) => ({ id: i % 2 === 0 ? String(id) : id, name: `plant ${id}`, tag: id % 2n === 0n ? 'even' : null })),
  });
}

const affected = (count: number | undefined) => Object.assign(new QueryResult(), { affected: count });

describe(PlantsService.name, () => {
  let service: PlantsService;
  let runner: { query: jest.Mock; release: jest.Mock };
  let config: { get: jest.Mock };

  beforeEach(async () => {
    runner = { query: jest.fn().mockResolvedValue(affected(1)), release: jest.fn().mockResolvedValue(undefined) };
    config = { get: jest.fn((key: string) => (key === 'plants.maxPage' ? MAX_PAGE : undefined)) };
    const moduleRef = await Test.createTestingModule({
      providers: [
        PlantsService,
        { provide: getDataSourceToken(), useValue: { createQueryRunner: () => runner } },
        { provide: ConfigService, useValue: config },
      ],
    }).compile();
    service = moduleRef.get(PlantsService);
  });

  it('reads its page cap from plants.maxPage', () => {
    expect(config.get).toHaveBeenCalledWith('plants.maxPage', expect.anything());
  });

  describe('create', () => {
    it('inserts once, owned by the caller, and returns the plant', async () => {
      await expect(service.create('alice', dto({ id: 7n, name: 'Fern', tag: 'green' }))).resolves.toStrictEqual({
        id: 7n,
        name: 'Fern',
        tag: 'green',
      });
      expect(runner.query).toHaveBeenCalledTimes(1);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.insert, ['alice', 7n, 'Fern', 'green'], true);
      expect(runner.release).toHaveBeenCalledTimes(1);
    });

    it.each([
      ['absent', {}],
      ['null', { tag: null }],
    ])('stores a tag that is %s as NULL and leaves it out of the answer', async (_label, tag) => {
      const created = await service.create('alice', dto({ id: 8n, name: 'Moss', ...tag }));
      expect(created).toStrictEqual({ id: 8n, name: 'Moss' });
      expect(created).not.toHaveProperty('tag');
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.insert, ['alice', 8n, 'Moss', null], true);
    });

    it('keeps an int64 id exact', async () => {
      const id = 9223372036854775807n;
      await expect(service.create('alice', dto({ id, name: 'Big' }))).resolves.toStrictEqual({ id, name: 'Big' });
      expect(runner.query.mock.calls[0][1][1]).toBe(id);
    });

    it.each([
      ['a raw MySQL error', Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' })],
      [
        'a QueryFailedError from SQLite',
        new QueryFailedError('INSERT', [], Object.assign(new Error('UNIQUE'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })),
      ],
    ])('turns a unique violation (%s) into a ConflictException', async (_label, error) => {
      runner.query.mockRejectedValue(error);
      const attempt = service.create('alice', dto({ id: 7n, name: 'Fern' }));
      await expect(attempt).rejects.toBeInstanceOf(ConflictException);
      await expect(attempt).rejects.toThrow('A plant with id 7 already exists');
    });

    it('rethrows any other error unchanged', async () => {
      const error = Object.assign(new Error("Table 'plants' doesn't exist"), { code: 'ER_NO_SUCH_TABLE' });
      runner.query.mockRejectedValue(error);
      await expect(service.create('alice', dto({ id: 7n, name: 'Fern' }))).rejects.toBe(error);
      expect(runner.release).toHaveBeenCalledTimes(1);
    });

    it('runs the INSERT again after a deadlock (a lost certification on Galera), releasing each runner', async () => {
      const deadlock = Object.assign(new Error('Deadlock found'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });
      runner.query.mockRejectedValueOnce(deadlock).mockResolvedValueOnce({ records: [], affected: 1 });
      await expect(service.create('alice', dto({ id: 7n, name: 'Fern' }))).resolves.toEqual({ id: 7n, name: 'Fern' });
      expect(runner.query).toHaveBeenCalledTimes(2);
      expect(runner.release).toHaveBeenCalledTimes(2);
    });
  });

  describe('list', () => {
    it('reads one row more than the page, ordered by id, for the owner only', async () => {
      runner.query.mockResolvedValue(rows());
      await expect(service.list('alice', { limit: 2 })).resolves.toEqual({ plants: [], limit: 2, nextAfter: undefined });
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.firstPage, ['alice', 3], true);
    });

    it('starts after the cursor, which it passes on exactly', async () => {
      runner.query.mockResolvedValue(rows());
      await service.list('alice', { limit: 2, after: 9223372036854775806n });
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.pageAfter, ['alice', 9223372036854775806n, 3], true);
    });

    it('releases the query runner when the statement fails', async () => {
      const error = new Error('connection lost');
      runner.query.mockRejectedValue(error);
      await expect(service.list('alice', {})).rejects.toBe(error);
      expect(runner.release).toHaveBeenCalledTimes(1);
    });

    it.each([
      ['absent', undefined, MAX_PAGE],
      ['over the cap', 1000, MAX_PAGE],
      ['at the cap', MAX_PAGE, MAX_PAGE],
      ['under the cap', 1, 1],
    ])('applies a limit that is %s as %p -> %p', async (_label, limit, applied) => {
      runner.query.mockResolvedValue(rows());
      const page = await service.list('alice', { limit });
      expect(page.limit).toBe(applied);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.firstPage, ['alice', applied + 1], true);
    });

    it('sets nextAfter to the last id on the page when more rows exist', async () => {
      runner.query.mockResolvedValue(rows(1n, 2n, 3n));
      await expect(service.list('alice', { limit: 2 })).resolves.toStrictEqual({
        plants: [
          { id: 1n, name: 'plant 1' },
          { id: 2n, name: 'plant 2', tag: 'even' },
        ],
        limit: 2,
        nextAfter: 2n,
      });
    });

    it.each([
      ['exactly a page', [1n, 2n]],
      ['less than a page', [1n]],
      ['nothing', []],
    ])('leaves nextAfter unset when the rows are %s', async (_label, ids) => {
      runner.query.mockResolvedValue(rows(...ids));
      const page = await service.list('alice', { limit: 2 });
      expect(page.nextAfter).toBeUndefined();
      expect(page.plants.map((plant) => plant.id)).toEqual(ids);
    });

    it('keeps an int64 cursor exact', async () => {
      runner.query.mockResolvedValue(rows(9223372036854775806n, 9223372036854775807n));
      const page = await service.list('alice', { limit: 1 });
      expect(page.nextAfter).toBe(9223372036854775806n);
    });
  });

  describe('remove', () => {
    it('deletes the plant of that owner only', async () => {
      runner.query.mockResolvedValue(affected(1));
      await expect(service.remove('alice', 5n)).resolves.toBeUndefined();
      expect(runner.query).toHaveBeenCalledTimes(1);
      expect(runner.query).toHaveBeenCalledWith(PLANT_STATEMENTS.delete, ['alice', 5n], true);
    });

    it.each([0, undefined])('answers affected=%p with a NotFoundException', async (count) => {
      runner.query.mockResolvedValue(affected(count));
      const attempt = service.remove('alice', 5n);
      await expect(attempt).rejects.toBeInstanceOf(NotFoundException);
      await expect(attempt).rejects.toThrow('Plant 5 not found');
    });

    it('rethrows database errors', async () => {
      const error = new Error('SQLITE_BUSY');
      runner.query.mockRejectedValue(error);
      await expect(service.remove('alice', 5n)).rejects.toBe(error);
    });
  });
});

describe(toPlantDto.name, () => {
  it('leaves out a null or missing tag', () => {
    expect(toPlantDto({ id: 1n, name: 'a', tag: null })).toStrictEqual({ id: 1n, name: 'a' });
    expect(toPlantDto({ id: 1n, name: 'a', tag: undefined as unknown as null })).toStrictEqual({ id: 1n, name: 'a' });
  });

  it('keeps a tag', () => {
    expect(toPlantDto({ id: 1n, name: 'a', tag: 'b' })).toStrictEqual({ id: 1n, name: 'a', tag: 'b' });
  });
});
