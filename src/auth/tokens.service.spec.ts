import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { createHash } from 'node:crypto';
import { ApiToken } from './api-token.entity';
import { LAST_USED_RESOLUTION_MS, TokenInputError, TokensService, tokenStatus } from './tokens.service';
import { REJECTED_CACHE_MAX_ENTRIES, TOKEN_CACHE_MAX_ENTRIES } from './auth.limits';
import { SCOPE_NAMES } from './scopes';
import { TokensRepository } from './tokens.repository';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const SECRET = `pst_${'A'.repeat(43)}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

function stored(fields: Partial<ApiToken> = {}): ApiToken {
  return {
    id: '3f1c2a4e-0000-4000-8000-000000000001',
    tokenHash: sha256(SECRET),
    subject: 'alice',
    scopes: 'plants:read plants:write',
    name: null,
    createdAt: ago(86_400_000),
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    ...fields,
  };
}

const CACHE_TTL_MS = 5000;

describe(TokensService.name, () => {
  let service: TokensService;
  let repository: Record<keyof TokensRepository, jest.Mock>;

  beforeEach(async () => {
    jest.useFakeTimers({ now: NOW, doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    repository = {
      insert: jest.fn().mockResolvedValue(undefined),
      findByHash: jest.fn().mockResolvedValue(null),
      findById: jest.fn().mockResolvedValue(null),
      list: jest.fn().mockResolvedValue([]),
      setLastUsed: jest.fn().mockResolvedValue(undefined),
      setRevoked: jest.fn().mockResolvedValue(undefined),
      count: jest.fn().mockResolvedValue(0),
    };
    service = await build(CACHE_TTL_MS);
  });

  async function build(tokenCacheTtlMs: number): Promise<TokensService> {
    const moduleRef = await Test.createTestingModule({
      providers: [
        TokensService,
        { provide: TokensRepository, useValue: repository },
        { provide: ConfigService, useValue: new ConfigService({ auth: { tokenCacheTtlMs } }) },
      ],
    }).compile();
    return moduleRef.get(TokensService);
  }

  afterEach(() => jest.useRealTimers());

  describe('create', () => {
    it('returns a pst_ secret of 47 characters and stores only its SHA-256 hash', async () => {
      const { secret, token } = await service.create({ subject: 'alice' });

      expect(secret).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
      expect(secret).toHaveLength(47);
      expect(repository.insert).toHaveBeenCalledTimes(1);
      const inserted = repository.insert.mock.calls[0][0] as ApiToken;
      expect(inserted).toBe(token);
      expect(inserted.tokenHash).toBe(sha256(secret));
      expect(JSON.stringify(inserted)).not.toContain(secret.slice(4));
    });

    it('fills in the defaults: every scope, no name, no expiry, never used', async () => {
      const { token } = await service.create({ subject: 'alice' });
      expect(token).toEqual({
        id: expect.stringMatching(UUID),
        tokenHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        subject: 'alice',
        scopes: SCOPE_NAMES.join(' '),
        name: null,
        createdAt: NOW,
        expiresAt: null,
        revokedAt: null,
        lastUsedAt: null,
      });
    });

    it('issues a different secret and id every time', async () => {
      const first = await service.create({ subject: 'alice' });
      const second = await service.create({ subject: 'alice' });
      expect(second.secret).not.toBe(first.secret);
      expect(second.token.id).not.toBe(first.token.id);
      expect(second.token.tokenHash).not.toBe(first.token.tokenHash);
    });

    it.each([
      [['plants:read'], 'plants:read'],
      [['plants:write'], 'plants:write'],
      [['plants:write', 'plants:write'], 'plants:write'],
      [['plants:write', 'plants:read'], 'plants:write plants:read'],
      [[], SCOPE_NAMES.join(' ')],
    ] as const)('stores the scopes %p as %p', async (scopes, expected) => {
      const { token } = await service.create({ subject: 'alice', scopes });
      expect(token.scopes).toBe(expected);
    });

    it('sets the expiry relative to now and keeps the name', async () => {
      const { token } = await service.create({ subject: 'alice', expiresInMs: 90_000, name: 'ci' });
      expect(token.expiresAt).toEqual(new Date(NOW.getTime() + 90_000));
      expect(token.name).toBe('ci');
    });

    it.each(['alice', 'a', 'Alice.Smith@example.com', 'svc:reports|eu+1_x-y', `a${'b'.repeat(127)}`])(
      'accepts the user id %p',
      async (subject) => {
        await expect(service.create({ subject })).resolves.toMatchObject({ token: { subject } });
      },
    );

    it.each(['a b', '', ' alice', 'alice ', '-alice', '.alice', 'al/ice', 'élise', 'a\nb', `a${'b'.repeat(128)}`])(
      'refuses the user id %p with a TokenInputError and stores nothing',
      async (subject) => {
        const attempt = service.create({ subject });
        await expect(attempt).rejects.toBeInstanceOf(TokenInputError);
        await expect(attempt).rejects.toThrow(/^A user id is 1 to 128 characters/);
        expect(repository.insert).not.toHaveBeenCalled();
      },
    );

    it.each(['', 'x'.repeat(101)])('refuses a name of %p characters', async (name) => {
      const attempt = service.create({ subject: 'alice', name });
      await expect(attempt).rejects.toBeInstanceOf(TokenInputError);
      await expect(attempt).rejects.toThrow('A token name is 1 to 100 characters');
      expect(repository.insert).not.toHaveBeenCalled();
    });

    it('accepts a name of 100 characters', async () => {
      await expect(service.create({ subject: 'alice', name: 'x'.repeat(100) })).resolves.toBeDefined();
    });

    it.each([0, -1, Number.NaN])('refuses the expiry %p', async (expiresInMs) => {
      const attempt = service.create({ subject: 'alice', expiresInMs });
      await expect(attempt).rejects.toBeInstanceOf(TokenInputError);
      await expect(attempt).rejects.toThrow('An expiry must lie in the future');
      expect(repository.insert).not.toHaveBeenCalled();
    });

    it('passes on a failed insert', async () => {
      const error = new Error('SQLITE_BUSY');
      repository.insert.mockRejectedValue(error);
      await expect(service.create({ subject: 'alice' })).rejects.toBe(error);
    });
  });

  describe('authenticate', () => {
    it.each([
      '',
      'garbage',
      'pst_',
      `pst_${'A'.repeat(42)}`,
      `pst_${'A'.repeat(44)}`,
      `pst_${'A'.repeat(42)}=`,
      `PST_${'A'.repeat(43)}`,
      `Bearer ${SECRET}`,
    ])('answers the wrongly shaped secret %p with null without asking the database', async (secret) => {
      await expect(service.authenticate(secret)).resolves.toBeNull();
      expect(repository.findByHash).not.toHaveBeenCalled();
    });

    it('looks a secret up by its hash and answers an unknown one with null', async () => {
      await expect(service.authenticate(SECRET)).resolves.toBeNull();
      expect(repository.findByHash).toHaveBeenCalledWith(sha256(SECRET));
      expect(repository.setLastUsed).not.toHaveBeenCalled();
    });

    it.each([
      ['revoked', stored({ revokedAt: ago(1000) })],
      ['expired', stored({ expiresAt: ago(1) })],
      ['expiring this very moment', stored({ expiresAt: NOW })],
      ['revoked and expired', stored({ revokedAt: ago(5000), expiresAt: ago(1000) })],
    ])('answers a %s token with null and does not touch it', async (_label, token) => {
      repository.findByHash.mockResolvedValue(token);
      await expect(service.authenticate(SECRET)).resolves.toBeNull();
      expect(repository.setLastUsed).not.toHaveBeenCalled();
    });

    it('answers an active token with its principal', async () => {
      repository.findByHash.mockResolvedValue(
        stored({ scopes: 'plants:read', expiresAt: new Date(NOW.getTime() + 1) }),
      );
      await expect(service.authenticate(SECRET)).resolves.toEqual({
        subject: 'alice',
        scopes: ['plants:read'],
        kind: 'pst',
        tokenId: '3f1c2a4e-0000-4000-8000-000000000001',
      });
    });

    it.each([
      ['never', null],
      ['exactly the resolution ago', ago(LAST_USED_RESOLUTION_MS)],
      ['a day ago', ago(86_400_000)],
    ])('records the use of a token last used %s', async (_label, lastUsedAt) => {
      repository.findByHash.mockResolvedValue(stored({ lastUsedAt }));
      await expect(service.authenticate(SECRET)).resolves.not.toBeNull();
      expect(repository.setLastUsed).toHaveBeenCalledTimes(1);
      expect(repository.setLastUsed).toHaveBeenCalledWith('3f1c2a4e-0000-4000-8000-000000000001', NOW);
    });

    it.each([
      ['just now', ago(0)],
      ['30 s ago', ago(30_000)],
      ['just under the resolution ago', ago(LAST_USED_RESOLUTION_MS - 1)],
    ])('does not write again for a token used %s', async (_label, lastUsedAt) => {
      repository.findByHash.mockResolvedValue(stored({ lastUsedAt }));
      await expect(service.authenticate(SECRET)).resolves.not.toBeNull();
      expect(repository.setLastUsed).not.toHaveBeenCalled();
    });

    it('passes on database errors', async () => {
      const error = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      repository.findByHash.mockRejectedValue(error);
      await expect(service.authenticate(SECRET)).rejects.toBe(error);
    });

    it('authenticates a secret it has just issued', async () => {
      const { secret, token } = await service.create({ subject: 'bob', scopes: ['plants:write'] });
      repository.findByHash.mockImplementation(async (tokenHash: string) =>
        tokenHash === token.tokenHash ? token : null,
      );
      await expect(service.authenticate(secret)).resolves.toEqual({
        subject: 'bob',
        scopes: ['plants:write'],
        kind: 'pst',
        tokenId: token.id,
      });
    });
  });

  describe('the lookup cache', () => {
    beforeEach(() => repository.findByHash.mockResolvedValue(stored({ lastUsedAt: NOW })));

    it('asks the database once per token within the TTL, and again after it', async () => {
      for (let i = 0; i < 5; i++)
        await expect(service.authenticate(SECRET)).resolves.toMatchObject({ subject: 'alice' });
      expect(repository.findByHash).toHaveBeenCalledTimes(1);

      jest.advanceTimersByTime(CACHE_TTL_MS - 1);
      await service.authenticate(SECRET);
      expect(repository.findByHash).toHaveBeenCalledTimes(1);

      jest.advanceTimersByTime(1);
      await service.authenticate(SECRET);
      expect(repository.findByHash).toHaveBeenCalledTimes(2);
    });

    it('shares one lookup between concurrent requests', async () => {
      await Promise.all([service.authenticate(SECRET), service.authenticate(SECRET), service.authenticate(SECRET)]);
      expect(repository.findByHash).toHaveBeenCalledTimes(1);
    });

    it('remembers unknown secrets too, so a flood of one bad token costs one lookup', async () => {
      repository.findByHash.mockResolvedValue(null);
      await service.authenticate(SECRET);
      await service.authenticate(SECRET);
      expect(repository.findByHash).toHaveBeenCalledTimes(1);
    });

    it('never serves a token past its expiry, whatever the TTL', async () => {
      repository.findByHash.mockResolvedValue(stored({ lastUsedAt: NOW, expiresAt: new Date(NOW.getTime() + 1000) }));
      await expect(service.authenticate(SECRET)).resolves.not.toBeNull();
      jest.advanceTimersByTime(1000);
      repository.findByHash.mockResolvedValue(stored({ lastUsedAt: NOW, expiresAt: new Date(NOW.getTime() + 1000) }));
      await expect(service.authenticate(SECRET)).resolves.toBeNull();
      expect(repository.findByHash).toHaveBeenCalledTimes(2);
    });

    it('forgets a token revoked through this service at once', async () => {
      await expect(service.authenticate(SECRET)).resolves.not.toBeNull();
      await service.revoke(SECRET);
      repository.findByHash.mockResolvedValue(stored({ revokedAt: NOW }));
      await expect(service.authenticate(SECRET)).resolves.toBeNull();
    });

    it('does not remember a failed lookup', async () => {
      const error = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      repository.findByHash.mockRejectedValueOnce(error);
      await expect(service.authenticate(SECRET)).rejects.toBe(error);
      await expect(service.authenticate(SECRET)).resolves.not.toBeNull();
      expect(repository.findByHash).toHaveBeenCalledTimes(2);
    });

    /** `count` well-formed secrets, none of them SECRET. */
    const secretsOf = (count: number, letter = 'A') =>
      Array.from({ length: count }, (_, i) => `pst_${String(i).padStart(42, letter)}x`);
    /** The repository knows exactly these secrets as active tokens. */
    const knowOnly = (secrets: string[]) => {
      const hashes = new Set(secrets.map(sha256));
      repository.findByHash.mockImplementation(async (tokenHash: string) =>
        hashes.has(tokenHash) ? stored({ tokenHash, lastUsedAt: NOW }) : null,
      );
    };

    it(`holds at most ${TOKEN_CACHE_MAX_ENTRIES} valid lookups, dropping the oldest`, async () => {
      const secrets = secretsOf(TOKEN_CACHE_MAX_ENTRIES + 1);
      knowOnly(secrets);
      for (const secret of secrets) await service.authenticate(secret);
      expect(repository.findByHash).toHaveBeenCalledTimes(secrets.length);
      await service.authenticate(secrets[secrets.length - 1]);
      expect(repository.findByHash).toHaveBeenCalledTimes(secrets.length);
      await service.authenticate(secrets[0]);
      expect(repository.findByHash).toHaveBeenCalledTimes(secrets.length + 1);
    });

    it(`holds at most ${REJECTED_CACHE_MAX_ENTRIES} refused secrets, dropping the oldest`, async () => {
      repository.findByHash.mockResolvedValue(null);
      const secrets = secretsOf(REJECTED_CACHE_MAX_ENTRIES + 1, 'B');
      for (const secret of secrets) await service.authenticate(secret);
      await service.authenticate(secrets[secrets.length - 1]);
      expect(repository.findByHash).toHaveBeenCalledTimes(secrets.length);
      await service.authenticate(secrets[0]);
      expect(repository.findByHash).toHaveBeenCalledTimes(secrets.length + 1);
    });

    it('keeps every valid token through a flood of unknown ones, finished or in flight', async () => {
      const valid = secretsOf(TOKEN_CACHE_MAX_ENTRIES);
      knowOnly(valid);
      for (const secret of valid) await service.authenticate(secret);
      const flood = secretsOf(TOKEN_CACHE_MAX_ENTRIES + 1, 'B');
      for (const secret of flood.slice(0, -1000)) await service.authenticate(secret);
      // The rest all at once, still in flight together.
      const inFlight = Promise.all(flood.slice(-1000).map((secret) => service.authenticate(secret)));
      for (const secret of valid) expect(service.cachedPrincipal(secret)).toMatchObject({ subject: 'alice' });
      await inFlight;
      repository.findByHash.mockClear();
      for (const secret of valid)
        await expect(service.authenticate(secret)).resolves.toMatchObject({ subject: 'alice' });
      expect(repository.findByHash).not.toHaveBeenCalled();
    });

    describe('cachedPrincipal', () => {
      it('answers a token whose valid lookup is remembered, without a lookup', async () => {
        expect(service.cachedPrincipal(SECRET)).toBeNull();
        await service.authenticate(SECRET);
        repository.findByHash.mockClear();
        expect(service.cachedPrincipal(SECRET)).toMatchObject({
          subject: 'alice',
          scopes: ['plants:read', 'plants:write'],
        });
        expect(repository.findByHash).not.toHaveBeenCalled();
      });

      it('answers null while the lookup is in flight, for a refused token, and after the TTL', async () => {
        const lookup = service.authenticate(SECRET);
        expect(service.cachedPrincipal(SECRET)).toBeNull();
        await lookup;
        jest.advanceTimersByTime(CACHE_TTL_MS);
        expect(service.cachedPrincipal(SECRET)).toBeNull();

        repository.findByHash.mockResolvedValue(null);
        const unknown = `pst_${'U'.repeat(43)}`;
        await service.authenticate(unknown);
        expect(service.cachedPrincipal(unknown)).toBeNull();
      });

      it('answers null for a token revoked through this service, or past its expiry', async () => {
        repository.findByHash.mockResolvedValue(stored({ lastUsedAt: NOW, expiresAt: new Date(NOW.getTime() + 1000) }));
        await service.authenticate(SECRET);
        expect(service.cachedPrincipal(SECRET)).not.toBeNull();
        jest.advanceTimersByTime(1000);
        expect(service.cachedPrincipal(SECRET)).toBeNull();

        repository.findByHash.mockResolvedValue(stored({ lastUsedAt: NOW }));
        await service.authenticate(SECRET);
        await service.revoke(SECRET);
        expect(service.cachedPrincipal(SECRET)).toBeNull();
      });

      it('answers null for malformed secrets and when there is no cache', async () => {
        expect(service.cachedPrincipal('not-a-token')).toBeNull();
        const uncached = await build(0);
        await uncached.authenticate(SECRET);
        expect(uncached.cachedPrincipal(SECRET)).toBeNull();
      });
    });

    it('looks every request up when TOKEN_CACHE_TTL_MS is 0', async () => {
      const uncached = await build(0);
      await uncached.authenticate(SECRET);
      await uncached.authenticate(SECRET);
      expect(repository.findByHash).toHaveBeenCalledTimes(2);
    });
  });

  describe('list', () => {
    it('lists every token, oldest first', async () => {
      const tokens = [stored()];
      repository.list.mockResolvedValue(tokens);
      await expect(service.list()).resolves.toBe(tokens);
      expect(repository.list).toHaveBeenCalledWith(undefined);
    });

    it('lists the tokens of one user', async () => {
      await service.list('alice');
      expect(repository.list).toHaveBeenCalledWith('alice');
    });
  });

  describe('revoke', () => {
    it('revokes by public id', async () => {
      const token = stored();
      repository.findById.mockResolvedValue(token);

      await expect(service.revoke(token.id)).resolves.toEqual({
        token: { ...token, revokedAt: NOW },
        revokedNow: true,
      });
      expect(repository.findById).toHaveBeenCalledWith(token.id);
      expect(repository.setRevoked).toHaveBeenCalledWith(token.id, NOW);
    });

    it('revokes by the secret itself, looked up by its hash', async () => {
      repository.findByHash.mockResolvedValue(stored());

      await expect(service.revoke(SECRET)).resolves.toMatchObject({ revokedNow: true });
      expect(repository.findByHash).toHaveBeenCalledWith(sha256(SECRET));
      expect(repository.setRevoked).toHaveBeenCalledTimes(1);
    });

    it('says so when the token was already revoked, and changes nothing', async () => {
      const earlier = ago(3_600_000);
      repository.findById.mockResolvedValue(stored({ revokedAt: earlier }));

      const result = await service.revoke('3f1c2a4e-0000-4000-8000-000000000001');
      expect(result).toMatchObject({ revokedNow: false });
      expect(result?.token.revokedAt).toBe(earlier);
      expect(repository.setRevoked).not.toHaveBeenCalled();
    });

    it('revoking twice is harmless', async () => {
      const token = stored();
      repository.findById.mockResolvedValue(token);

      await expect(service.revoke(token.id)).resolves.toMatchObject({ revokedNow: true });
      await expect(service.revoke(token.id)).resolves.toMatchObject({ revokedNow: false });
      expect(repository.setRevoked).toHaveBeenCalledTimes(1);
    });

    it.each(['no-such-id', SECRET])('answers null when nothing matches %p', async (reference) => {
      await expect(service.revoke(reference)).resolves.toBeNull();
      expect(repository.setRevoked).not.toHaveBeenCalled();
    });
  });
});

describe(tokenStatus.name, () => {
  it.each([
    ['active', stored(), 'active'],
    ['active until later', stored({ expiresAt: new Date(NOW.getTime() + 1) }), 'active'],
    ['expired', stored({ expiresAt: NOW }), 'expired'],
    ['revoked', stored({ revokedAt: ago(1) }), 'revoked'],
    ['revoked beats expired', stored({ revokedAt: ago(1), expiresAt: ago(2) }), 'revoked'],
  ])('%s', (_label, token, status) => {
    expect(tokenStatus(token, NOW)).toBe(status);
  });
});
