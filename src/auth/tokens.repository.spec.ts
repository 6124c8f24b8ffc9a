import { isUniqueViolation } from '../database';
import { testDatabases } from '../../test/utils/databases';
import { RepositoryDatabase, failureOf, startRepositoryDatabase } from '../../test/utils/repository-database';
import { ApiToken } from './api-token.entity';
import { TokensRepository } from './tokens.repository';

function token(id: string, fields: Partial<ApiToken> = {}): ApiToken {
  return Object.assign(new ApiToken(), {
    id,
    tokenHash: id.padEnd(64, 'h'),
    subject: 'alice',
    scopes: 'plants:read plants:write',
    name: null,
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    ...fields,
  });
}

describe.each(testDatabases())(`${TokensRepository.name} on %s`, (name) => {
  let db: RepositoryDatabase;
  let tokens: TokensRepository;

  beforeAll(async () => {
    db = await startRepositoryDatabase(name, [TokensRepository]);
    tokens = db.get(TokensRepository);
  });
  afterAll(() => db.close());
  beforeEach(() => db.clear('api_tokens'));

  it('stores a token as given and finds it by hash or by id, times to the millisecond', async () => {
    const stored = token('t-1', {
      name: 'ci',
      createdAt: new Date('2026-03-04T05:06:07.089Z'),
      expiresAt: new Date('2027-03-04T05:06:07.123Z'),
    });
    await tokens.insert(stored);
    await expect(tokens.findByHash(stored.tokenHash)).resolves.toEqual(stored);
    await expect(tokens.findById('t-1')).resolves.toEqual(stored);
    await expect(tokens.findByHash('x'.repeat(64))).resolves.toBeNull();
    await expect(tokens.findById('missing')).resolves.toBeNull();
  });

  it('refuses a second token with the same hash as a unique violation', async () => {
    await tokens.insert(token('t-1', { tokenHash: 'same'.padEnd(64, '0') }));
    const duplicate = await failureOf(tokens.insert(token('t-2', { tokenHash: 'same'.padEnd(64, '0') })));
    expect(isUniqueViolation(duplicate)).toBe(true);
    await expect(tokens.count()).resolves.toBe(1);
  });

  it("lists every token or one user's, oldest first (ties in id order)", async () => {
    await tokens.insert(token('t-3', { subject: 'bob', createdAt: new Date('2026-01-03T00:00:00Z') }));
    await tokens.insert(token('t-2', { createdAt: new Date('2026-01-01T00:00:00Z') }));
    await tokens.insert(token('t-1', { createdAt: new Date('2026-01-01T00:00:00Z') }));
    await tokens.insert(token('t-0', { createdAt: new Date('2026-01-02T00:00:00Z') }));
    await expect(tokens.list()).resolves.toMatchObject([{ id: 't-1' }, { id: 't-2' }, { id: 't-0' }, { id: 't-3' }]);
    await expect(tokens.list('alice')).resolves.toMatchObject([{ id: 't-1' }, { id: 't-2' }, { id: 't-0' }]);
    await expect(tokens.list('nobody')).resolves.toEqual([]);
  });

  it('records the last use and the revocation of one token, leaving the others as they were', async () => {
    await tokens.insert(token('t-1'));
    await tokens.insert(token('t-2'));
    await tokens.setLastUsed('t-1', new Date('2026-05-05T05:05:05.555Z'));
    await tokens.setRevoked('t-1', new Date('2026-06-06T06:06:06.666Z'));
    await expect(tokens.findById('t-1')).resolves.toMatchObject({
      lastUsedAt: new Date('2026-05-05T05:05:05.555Z'),
      revokedAt: new Date('2026-06-06T06:06:06.666Z'),
    });
    await expect(tokens.findById('t-2')).resolves.toEqual(token('t-2'));
  });

  it('counts the tokens', async () => {
    await expect(tokens.count()).resolves.toBe(0);
    await tokens.insert(token('t-1'));
    await tokens.insert(token('t-2', { subject: 'bob' }));
    await expect(tokens.count()).resolves.toBe(2);
  });
});
