import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { CannotExecuteNotConnectedError } from 'typeorm';
import { ApiToken } from './api-token.entity';
import { TokensRepository } from './tokens.repository';

describe(TokensRepository.name, () => {
  let repository: TokensRepository;
  let table: { insert: jest.Mock; findOneBy: jest.Mock; find: jest.Mock; update: jest.Mock; count: jest.Mock };
  let dataSource: { isInitialized: boolean; getRepository: jest.Mock };
  const at = new Date('2026-03-01T12:00:00.000Z');

  beforeEach(async () => {
    table = {
      insert: jest.fn().mockResolvedValue({}),
      findOneBy: jest.fn().mockResolvedValue(null),
      find: jest.fn().mockResolvedValue([]),
      update: jest.fn().mockResolvedValue({ affected: 1 }),
      count: jest.fn().mockResolvedValue(3),
    };
    dataSource = { isInitialized: true, getRepository: jest.fn(() => table) };
    const moduleRef = await Test.createTestingModule({
      providers: [TokensRepository, { provide: getDataSourceToken(), useValue: dataSource }],
    }).compile();
    repository = moduleRef.get(TokensRepository);
  });

  it('works on the ApiToken table', () => {
    expect(dataSource.getRepository).toHaveBeenCalledWith(ApiToken);
  });

  it('inserts a token as given', async () => {
    const token = Object.assign(new ApiToken(), { id: 'a' });
    await expect(repository.insert(token)).resolves.toBeUndefined();
    expect(table.insert).toHaveBeenCalledWith(token);
  });

  it('finds one token by hash or by id', async () => {
    const token = Object.assign(new ApiToken(), { id: 'a' });
    table.findOneBy.mockResolvedValue(token);
    await expect(repository.findByHash('ab12')).resolves.toBe(token);
    expect(table.findOneBy).toHaveBeenLastCalledWith({ tokenHash: 'ab12' });
    await expect(repository.findById('a')).resolves.toBe(token);
    expect(table.findOneBy).toHaveBeenLastCalledWith({ id: 'a' });
  });

  it("lists every token or one user's, oldest first", async () => {
    await repository.list();
    expect(table.find).toHaveBeenLastCalledWith({ where: {}, order: { createdAt: 'ASC', id: 'ASC' } });
    await repository.list('alice');
    expect(table.find).toHaveBeenLastCalledWith({
      where: { subject: 'alice' },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  });

  it('writes one column per update', async () => {
    await repository.setLastUsed('a', at);
    expect(table.update).toHaveBeenLastCalledWith({ id: 'a' }, { lastUsedAt: at });
    await repository.setRevoked('a', at);
    expect(table.update).toHaveBeenLastCalledWith({ id: 'a' }, { revokedAt: at });
  });

  it('counts the tokens', async () => {
    await expect(repository.count()).resolves.toBe(3);
  });

  it('passes errors on unchanged while the data source is open', async () => {
    const error = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    table.findOneBy.mockRejectedValue(error);
    await expect(repository.findByHash('ab12')).rejects.toBe(error);
  });

  it("reports any failure on a closed data source as TypeORM's not-connected error", async () => {
    dataSource.isInitialized = false;
    table.findOneBy.mockRejectedValue(new TypeError('The database connection is not open'));
    await expect(repository.findByHash('ab12')).rejects.toBeInstanceOf(CannotExecuteNotConnectedError);
  });
});
