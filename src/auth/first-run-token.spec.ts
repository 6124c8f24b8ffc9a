import { INestApplicationContext } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { issueFirstRunToken } from './first-run-token';
import { TokensRepository } from './tokens.repository';
import { TokensService } from './tokens.service';

describe(issueFirstRunToken.name, () => {
  const issued = { secret: 'pst_x', token: {} };
  let repository: { count: jest.Mock };
  let tokens: { create: jest.Mock };

  function appWith(env: string, databaseType: string): INestApplicationContext {
    const config = new ConfigService({ env, database: { type: databaseType } });
    const providers = new Map<unknown, unknown>([
      [ConfigService, config],
      [TokensRepository, repository],
      [TokensService, tokens],
    ]);
    return { get: (token: unknown) => providers.get(token) } as unknown as INestApplicationContext;
  }

  beforeEach(() => {
    repository = { count: jest.fn().mockResolvedValue(0) };
    tokens = { create: jest.fn().mockResolvedValue(issued) };
  });

  it('issues a development token on an empty embedded database', async () => {
    await expect(issueFirstRunToken(appWith('development', 'sqlite'))).resolves.toBe(issued);
    expect(tokens.create).toHaveBeenCalledWith({ subject: 'developer', name: 'development token' });
  });

  it.each([1, 5])('issues nothing when %p tokens exist', async (count) => {
    repository.count.mockResolvedValue(count);
    await expect(issueFirstRunToken(appWith('development', 'sqlite'))).resolves.toBeNull();
    expect(tokens.create).not.toHaveBeenCalled();
  });

  it.each([
    ['in production', 'production', 'sqlite'],
    ['on MySQL', 'development', 'mysql'],
    ['on MariaDB', 'test', 'mariadb'],
  ])('issues nothing %s, without asking the database', async (_label, env, type) => {
    await expect(issueFirstRunToken(appWith(env, type))).resolves.toBeNull();
    expect(repository.count).not.toHaveBeenCalled();
    expect(tokens.create).not.toHaveBeenCalled();
  });
});
