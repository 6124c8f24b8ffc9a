import { Test } from '@nestjs/testing';
import { Request } from 'express';
import { ServiceUnavailableException } from '@nestjs/common';
import { BearerStrategy } from './bearer.strategy';
import { JwtVerifier } from './oidc/jwt-verifier';
import { Principal } from './principal';
import { TokensService } from './tokens.service';

const SECRET = `pst_${'A'.repeat(43)}`;
const PRINCIPAL: Principal = { subject: 'alice', scopes: ['plants:read'], kind: 'pst', tokenId: 'token-1' };

type Outcome =
  { kind: 'success'; user: unknown } | { kind: 'fail'; challenge: unknown } | { kind: 'error'; error: unknown };

describe(BearerStrategy.name, () => {
  let strategy: BearerStrategy;
  let tokens: { authenticate: jest.Mock };
  let jwts: { accepts: jest.Mock; authenticate: jest.Mock };

  beforeEach(async () => {
    tokens = { authenticate: jest.fn().mockResolvedValue(PRINCIPAL) };
    jwts = { accepts: jest.fn((token: string) => token.includes('.')), authenticate: jest.fn() };
    const moduleRef = await Test.createTestingModule({
      providers: [
        BearerStrategy,
        { provide: TokensService, useValue: tokens },
        { provide: JwtVerifier, useValue: jwts },
      ],
    }).compile();
    strategy = moduleRef.get(BearerStrategy);
  });

  /** Runs the strategy as passport does: on a copy whose success/fail/error report the outcome. */
  function run(req: Partial<Request>): Promise<Outcome> {
    return new Promise((resolve) => {
      const attempt = Object.create(strategy) as BearerStrategy & {
        success: jest.Mock;
        fail: jest.Mock;
        error: jest.Mock;
      };
      attempt.success = jest.fn((user: unknown) => resolve({ kind: 'success', user }));
      attempt.fail = jest.fn((challenge: unknown) => resolve({ kind: 'fail', challenge }));
      attempt.error = jest.fn((error: unknown) => resolve({ kind: 'error', error }));
      attempt.authenticate(req as Request);
    });
  }

  describe('validate', () => {
    it('delegates to TokensService.authenticate', async () => {
      await expect(strategy.validate(SECRET)).resolves.toBe(PRINCIPAL);
      expect(tokens.authenticate).toHaveBeenCalledWith(SECRET);
    });

    it('hands a token the JWT verifier accepts to it, and never to TokensService', async () => {
      const jwt = 'aaa.bbb.ccc';
      const owner: Principal = { subject: 'org-1', scopes: ['plants:read'], kind: 'jwt', tokenId: 'jwt' };
      jwts.authenticate.mockResolvedValue(owner);
      await expect(strategy.validate(jwt)).resolves.toBe(owner);
      expect(jwts.authenticate).toHaveBeenCalledWith(jwt);
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });

    it('hands a pst_ token to TokensService, never to the JWT verifier', async () => {
      await strategy.validate(SECRET);
      expect(jwts.accepts).toHaveBeenCalledWith(SECRET);
      expect(jwts.authenticate).not.toHaveBeenCalled();
    });

    it("passes on the verifier's 503 when the keys cannot be fetched", async () => {
      jwts.authenticate.mockRejectedValue(new ServiceUnavailableException('keys'));
      await expect(run({ headers: { authorization: 'Bearer aaa.bbb.ccc' } })).resolves.toEqual({
        kind: 'error',
        error: expect.any(ServiceUnavailableException),
      });
    });

    it('passes on null for an unknown token', async () => {
      tokens.authenticate.mockResolvedValue(null);
      await expect(strategy.validate(SECRET)).resolves.toBeNull();
    });
  });

  describe('authenticate', () => {
    it('succeeds with the principal for a token in the Authorization header', async () => {
      await expect(run({ headers: { authorization: `Bearer ${SECRET}` } })).resolves.toEqual({
        kind: 'success',
        user: PRINCIPAL,
      });
      expect(tokens.authenticate).toHaveBeenCalledWith(SECRET);
    });

    it('fails with an invalid_token challenge when the token is not known', async () => {
      tokens.authenticate.mockResolvedValue(null);
      await expect(run({ headers: { authorization: `Bearer ${SECRET}` } })).resolves.toEqual({
        kind: 'fail',
        challenge: expect.stringContaining('error="invalid_token"'),
      });
    });

    it('reports a failing lookup as an error, not as a failed login', async () => {
      const outage = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      tokens.authenticate.mockRejectedValue(outage);
      await expect(run({ headers: { authorization: `Bearer ${SECRET}` } })).resolves.toEqual({
        kind: 'error',
        error: outage,
      });
    });

    it('ignores access_token in the query string', async () => {
      const outcome = await run({ headers: {}, query: { access_token: SECRET } });
      expect(outcome.kind).toBe('fail');
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });

    it('ignores access_token in the body', async () => {
      const outcome = await run({ headers: {}, body: { access_token: SECRET } });
      expect(outcome.kind).toBe('fail');
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });

    it('uses the header token even when another one sits in the query string', async () => {
      // Plain passport-http-bearer answers 400 to two tokens; here the query one does not count.
      const other = `pst_${'B'.repeat(43)}`;
      await expect(
        run({
          headers: { authorization: `Bearer ${SECRET}` },
          query: { access_token: other },
          body: { access_token: other },
        }),
      ).resolves.toEqual({ kind: 'success', user: PRINCIPAL });
      expect(tokens.authenticate).toHaveBeenCalledTimes(1);
      expect(tokens.authenticate).toHaveBeenCalledWith(SECRET);
    });

    it.each(['Basic dXNlcjpwYXNz', 'Token abc'])(
      'fails without a lookup for the scheme in %p',
      async (authorization) => {
        const outcome = await run({ headers: { authorization } });
        expect(outcome.kind).toBe('fail');
        expect(tokens.authenticate).not.toHaveBeenCalled();
      },
    );

    it.each([`Bearer ${SECRET} extra`, 'Bearer', 'Bearer ', `Bearer\t${SECRET}`])(
      'fails without a lookup when the header is not a bearer token: %p',
      async (authorization) => {
        await expect(run({ headers: { authorization } })).resolves.toMatchObject({ kind: 'fail' });
        expect(tokens.authenticate).not.toHaveBeenCalled();
      },
    );

    it.each([`Bearer  ${SECRET}`, `bearer ${SECRET}`, `BEARER    ${SECRET}  `])(
      'reads the token as the rate limit does (RFC 6750: one or more spaces, any case): %p',
      async (authorization) => {
        await expect(run({ headers: { authorization } })).resolves.toEqual({ kind: 'success', user: PRINCIPAL });
        expect(tokens.authenticate).toHaveBeenCalledWith(SECRET);
      },
    );

    it('takes no token from a request with two Authorization headers', async () => {
      const outcome = await run({
        headers: { authorization: `Bearer ${SECRET}` },
        rawHeaders: ['Authorization', `Bearer ${SECRET}`, 'authorization', `Bearer pst_${'B'.repeat(43)}`],
      });
      expect(outcome.kind).toBe('fail');
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });
  });
});
