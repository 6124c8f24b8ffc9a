import { ConflictException, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { examplePlant } from '../../test/utils/bodies';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PlantDto, toPlantDto } from './dto/plant.dto';
import { EventOutbox } from '../webhooks/events/event-outbox.service';
import { PlantsRepository } from './plants.repository';
import { PlantsService } from './plants.service';
import { PlantAlreadyExists, PlantNotFound } from './plants.errors';

const MAX_PAGE = 3;
const DEFAULT_PAGE = 2;
const PAGES: Record<string, number> = { 'plants.maxPage': MAX_PAGE, 'plants.defaultPage': DEFAULT_PAGE };

function dto(fields: Partial<CreatePlantDto>): CreatePlantDto {
  return Object.assign(new CreatePlantDto(), fields);
}

/** Plants as the repository reads them. */
const plants = (...ids: bigint[]) => ids.map((id) => examplePlant({ id, name: `plant ${id}` }) as unknown as PlantDto);

describe(PlantsService.name, () => {
  let service: PlantsService;
  let repository: { newRow: jest.Mock; insert: jest.Mock; page: jest.Mock; delete: jest.Mock };
  let config: { get: jest.Mock };
  let events: { change: jest.Mock };

  beforeEach(async () => {
    repository = {
      // The row as stored: the owner and the fields given (the repository's own spec covers what it adds).
      newRow: jest.fn((owner: string, fields: object) => ({ owner, ...fields })),
      insert: jest.fn().mockResolvedValue(true),
      page: jest.fn().mockResolvedValue([]),
      delete: jest.fn().mockResolvedValue(true),
    };
    // The outbox makes the change as it is asked (its own spec covers how it records events).
    events = { change: jest.fn((_change, _owner, _plant, write: () => Promise<boolean>) => write()) };
    config = { get: jest.fn((key: string) => PAGES[key]) };
    const moduleRef = await Test.createTestingModule({
      providers: [
        PlantsService,
        { provide: PlantsRepository, useValue: repository },
        { provide: EventOutbox, useValue: events },
        { provide: ConfigService, useValue: config },
      ],
    }).compile();
    service = moduleRef.get(PlantsService);
  });

  it('reads its page cap and default page size from plants.maxPage and plants.defaultPage', () => {
    expect(config.get).toHaveBeenCalledWith('plants.maxPage', expect.anything());
    expect(config.get).toHaveBeenCalledWith('plants.defaultPage', expect.anything());
  });

  describe('create', () => {
    it('inserts the row the repository made for the caller, once, and answers with it as the API shows it', async () => {
      const row = { owner: 'alice', id: 7n, name: 'Fern', tag: 'green' };
      repository.newRow.mockReturnValue(row);
      const created = await service.create('alice', dto({ id: 7n, name: 'Fern', tag: 'green' }));
      expect(repository.newRow).toHaveBeenCalledWith('alice', dto({ id: 7n, name: 'Fern', tag: 'green' }));
      expect(repository.insert).toHaveBeenCalledTimes(1);
      expect(repository.insert).toHaveBeenCalledWith(row, undefined);
      // What the API shows of a row is toPlantDto's (its spec): the service answers with that, not the row.
      expect(created).toStrictEqual(toPlantDto(row));
      expect(created).not.toHaveProperty('owner');
    });

    it('makes the insert through the outbox, as a created plant of the caller, as it answers', async () => {
      const created = await service.create('alice', dto({ id: 7n, name: 'Fern' }));
      expect(events.change).toHaveBeenCalledWith('created', 'alice', created, expect.any(Function));
    });

    it.each([
      ['a raw MySQL error', Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' })],
      [
        'a wrapped SQLite error',
        { driverError: Object.assign(new Error('UNIQUE'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }) },
      ],
    ])('turns a unique violation (%s) into a ConflictException', async (_label, error) => {
      repository.insert.mockRejectedValue(error);
      const attempt = service.create('alice', dto({ id: 7n, name: 'Fern' }));
      await expect(attempt).rejects.toBeInstanceOf(ConflictException);
      await expect(attempt).rejects.toThrow(new PlantAlreadyExists(7n).message);
    });

    it('rethrows any other error unchanged', async () => {
      const error = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      repository.insert.mockRejectedValue(error);
      await expect(service.create('alice', dto({ id: 7n, name: 'Fern' }))).rejects.toBe(error);
    });
  });

  describe('list', () => {
    it('asks for one row more than the page, for the owner only', async () => {
      await expect(service.list('alice', { limit: 2 })).resolves.toEqual({
        plants: [],
        limit: 2,
        nextAfter: undefined,
      });
      expect(repository.page).toHaveBeenCalledWith('alice', 3, undefined);
    });

    it('starts after the cursor, which it passes on exactly', async () => {
      await service.list('alice', { limit: 2, after: 9223372036854775806n });
      expect(repository.page).toHaveBeenCalledWith('alice', 3, 9223372036854775806n);
    });

    it.each([
      ['absent', undefined, DEFAULT_PAGE],
      ['over the cap', 1000, MAX_PAGE],
      ['at the cap', MAX_PAGE, MAX_PAGE],
      ['under the cap', 1, 1],
    ])('applies a limit that is %s as %p -> %p', async (_label, limit, applied) => {
      const page = await service.list('alice', { limit });
      expect(page.limit).toBe(applied);
      expect(repository.page).toHaveBeenCalledWith('alice', applied + 1, undefined);
    });

    it('caps a default page size set above the cap', async () => {
      const pages: Record<string, number> = { 'plants.maxPage': MAX_PAGE, 'plants.defaultPage': MAX_PAGE + 5 };
      const capped = new PlantsService(
        repository as never,
        events as never,
        { get: (key: string) => pages[key] } as never,
      );
      await expect(capped.list('alice', {})).resolves.toMatchObject({ limit: MAX_PAGE });
    });

    it('sets nextAfter to the last id on the page when more rows exist', async () => {
      repository.page.mockResolvedValue(plants(1n, 2n, 3n));
      await expect(service.list('alice', { limit: 2 })).resolves.toStrictEqual({
        plants: plants(1n, 2n),
        limit: 2,
        nextAfter: 2n,
      });
    });

    it.each([
      ['exactly a page', [1n, 2n]],
      ['less than a page', [1n]],
      ['nothing', []],
    ])('leaves nextAfter unset when the rows are %s', async (_label, ids) => {
      repository.page.mockResolvedValue(plants(...ids));
      const page = await service.list('alice', { limit: 2 });
      expect(page.nextAfter).toBeUndefined();
      expect(page.plants.map((plant) => plant.id)).toEqual(ids);
    });

    it('keeps an int64 cursor exact', async () => {
      repository.page.mockResolvedValue(plants(9223372036854775806n, 9223372036854775807n));
      const page = await service.list('alice', { limit: 1 });
      expect(page.nextAfter).toBe(9223372036854775806n);
    });

    it('rethrows database errors', async () => {
      const error = new Error('connection lost');
      repository.page.mockRejectedValue(error);
      await expect(service.list('alice', {})).rejects.toBe(error);
    });
  });

  describe('remove', () => {
    it('deletes the plant of that owner only', async () => {
      await expect(service.remove('alice', 5n)).resolves.toBeUndefined();
      expect(repository.delete).toHaveBeenCalledTimes(1);
      expect(repository.delete).toHaveBeenCalledWith('alice', 5n, undefined);
      expect(events.change).toHaveBeenCalledWith('deleted', 'alice', { id: 5n }, expect.any(Function));
    });

    it('answers nothing deleted with a NotFoundException', async () => {
      repository.delete.mockResolvedValue(false);
      const attempt = service.remove('alice', 5n);
      await expect(attempt).rejects.toBeInstanceOf(NotFoundException);
      await expect(attempt).rejects.toThrow(new PlantNotFound(5n).message);
    });

    it('rethrows database errors', async () => {
      const error = new Error('SQLITE_BUSY');
      repository.delete.mockRejectedValue(error);
      await expect(service.remove('alice', 5n)).rejects.toBe(error);
    });
  });
});
