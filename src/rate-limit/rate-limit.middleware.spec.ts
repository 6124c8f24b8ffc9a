import { HttpException, HttpStatus } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { Request, Response } from 'express';
import { Principal } from '../auth/principal';
import { JwtVerifier } from '../auth/oidc/jwt-verifier';
import { TokensService } from '../auth/tokens.service';
import { RateLimitMiddleware, chargeUserOf } from './rate-limit.middleware';
import { RateLimitCount, RateLimitStorage } from './rate-limit.storage';

const LIMIT = 3;
const ALICE_TOKEN = `pst_${'A'.repeat(43)}`;
const ALICE_OTHER_TOKEN = `pst_${'a'.repeat(43)}`;
const BOB_TOKEN = `pst_${'B'.repeat(43)}`;
const UNKNOWN_TOKEN = `pst_${'U'.repeat(43)}`;
const PRINCIPALS: Record<string, Principal> = {
  [ALICE_TOKEN]: { subject: 'alice', scopes: ['plants:read', 'plants:write'], kind: 'pst', tokenId: 'alice-1' },
  [ALICE_OTHER_TOKEN]: { subject: 'alice', scopes: ['plants:read'], kind: 'pst', tokenId: 'alice-2' },
  [BOB_TOKEN]: { subject: 'bob', scopes: ['plants:read', 'plants:write'], kind: 'pst', tokenId: 'bob-1' },
};

interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  rawHeaders: string[];
  socket: { remoteAddress?: string };
}

/** `ip` is the client address: without X-Forwarded-For, the socket's (see clientAddress). */
function requestFor(
  options: { headers?: Record<string, string>; ip?: string; method?: string; path?: string } = {},
): FakeRequest {
  const headers = options.headers ?? {};
  return {
    method: options.method ?? 'GET',
    path: options.path ?? '/plants',
    headers,
    rawHeaders: Object.entries(headers).flat(),
    socket: { remoteAddress: 'ip' in options ? options.ip : '203.0.113.5' },
  };
}

describe(RateLimitMiddleware.name, () => {
  let middleware: RateLimitMiddleware;
  /** Secrets whose valid lookup the fake cache holds. */
  let cached: Set<string>;
  let tokens: { authenticate: jest.Mock; cachedPrincipal: jest.Mock };
  let jwts: { cachedPrincipal: jest.Mock };
  let hits: Map<string, number>;
  let storage: { consume: jest.Mock };

  beforeEach(async () => {
    cached = new Set();
    tokens = {
      authenticate: jest.fn(async (secret: string) => {
        const principal = PRINCIPALS[secret] ?? null;
        if (principal) cached.add(secret);
        return principal;
      }),
      cachedPrincipal: jest.fn((secret: string) => (cached.has(secret) ? PRINCIPALS[secret] : null)),
    };
    jwts = { cachedPrincipal: jest.fn(() => null) };
    hits = new Map();
    // Counts per key, refusing past the limit, with fixed times.
    storage = {
      consume: jest.fn(async (key: string): Promise<RateLimitCount> => {
        const consumed = (hits.get(key) ?? 0) + 1;
        hits.set(key, consumed);
        const refused = consumed > LIMIT;
        return { consumed, remaining: Math.max(0, LIMIT - consumed), refused, msBeforeNext: refused ? 41_200 : 56_100 };
      }),
    };
    const moduleRef = await Test.createTestingModule({
      providers: [
        RateLimitMiddleware,
        { provide: TokensService, useValue: tokens },
        { provide: JwtVerifier, useValue: jwts },
        { provide: RateLimitStorage, useValue: storage },
        {
          provide: ConfigService,
          useValue: { get: (key: string) => (key === 'rateLimit.perMinute' ? LIMIT : undefined) },
        },
      ],
    }).compile();
    middleware = moduleRef.get(RateLimitMiddleware);
  });

  const keys = () => storage.consume.mock.calls.map(([key]) => key as string);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Runs the middleware on one request; its outcome, the headers it set and whether it went on. */
  async function run(
    req: FakeRequest,
  ): Promise<{ headers: Record<string, string>; next: jest.Mock; error?: HttpException }> {
    const headers: Record<string, string> = {};
    const res = { setHeader: jest.fn((name: string, value: string) => (headers[name] = value)) };
    const next = jest.fn();
    try {
      await middleware.use(req as unknown as Request, res as unknown as Response, next);
      return { headers, next };
    } catch (error) {
      return { headers, next, error: error as HttpException };
    }
  }

  async function pass(req: FakeRequest): Promise<Record<string, string>> {
    const outcome = await run(req);
    expect(outcome.error).toBeUndefined();
    expect(outcome.next).toHaveBeenCalledTimes(1);
    return outcome.headers;
  }

  describe('bucket', () => {
    it('counts a token already known as valid against its user, without a lookup', async () => {
      cached.add(ALICE_TOKEN);
      await pass(requestFor({ headers: bearer(ALICE_TOKEN) }));
      expect(tokens.authenticate).not.toHaveBeenCalled();
      expect(keys()).toEqual(['default:user:alice']);
    });

    it('counts a JWT already verified against its owner, without a lookup', async () => {
      const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvcmctMSJ9.c2lnbmF0dXJl';
      jwts.cachedPrincipal.mockReturnValue({ subject: 'org-1', scopes: ['plants:read'], kind: 'jwt', tokenId: 'jwt' });
      await pass(requestFor({ headers: bearer(jwt) }));
      expect(jwts.cachedPrincipal).toHaveBeenCalledWith(jwt);
      expect(keys()).toEqual(['default:user:org-1']);
    });

    it('counts a token not known yet against the address, without a lookup, and its user once authentication found it', async () => {
      const req = requestFor({ headers: bearer(ALICE_TOKEN), ip: '192.0.2.1' });
      await pass(req);
      expect(keys()).toEqual(['default:ip:192.0.2.1']);
      expect(tokens.authenticate).not.toHaveBeenCalled();
      // What UserBudgetGuard does after the bearer guard has put the principal on the request.
      await chargeUserOf(Object.assign(req, { user: PRINCIPALS[ALICE_TOKEN] }));
      expect(keys()).toEqual(['default:ip:192.0.2.1', 'default:user:alice']);
      await chargeUserOf(req);
      expect(keys()).toHaveLength(2);
      // Known from now on: the user only.
      cached.add(ALICE_TOKEN);
      await pass(requestFor({ headers: bearer(ALICE_TOKEN), ip: '192.0.2.1' }));
      expect(keys().slice(2)).toEqual(['default:user:alice']);
    });

    it('charges no user for a request that authentication did not accept, or that carried no token', async () => {
      const unknown = requestFor({ headers: bearer(UNKNOWN_TOKEN) });
      await pass(unknown);
      await chargeUserOf(unknown);
      const anonymous = requestFor();
      await pass(anonymous);
      await chargeUserOf(Object.assign(anonymous, { user: PRINCIPALS[BOB_TOKEN] }));
      expect(keys()).toEqual(['default:ip:203.0.113.5', 'default:ip:203.0.113.5']);
    });

    it('reads the scheme case-insensitively and allows several spaces, as the auth guard does', async () => {
      cached.add(ALICE_TOKEN);
      await pass(requestFor({ headers: { authorization: `bearer   ${ALICE_TOKEN}` } }));
      expect(keys()).toEqual(['default:user:alice']);
    });

    it('counts a call without a token against the client address, without a lookup', async () => {
      await pass(requestFor({ ip: '203.0.113.5' }));
      expect(tokens.authenticate).not.toHaveBeenCalled();
      expect(tokens.cachedPrincipal).not.toHaveBeenCalled();
      expect(keys()).toEqual(['default:ip:203.0.113.5']);
    });

    it.each([
      ['an unknown, expired or revoked token', `Bearer ${UNKNOWN_TOKEN}`],
      ['a malformed bearer value', 'Bearer not a token'],
      ['another scheme', `Basic ${Buffer.from('alice:secret').toString('base64')}`],
      ['an empty header', ''],
    ])('counts a call with %s against the client address only', async (_label, authorization) => {
      await pass(requestFor({ headers: { authorization }, ip: '198.51.100.7' }));
      expect(keys()).toEqual(['default:ip:198.51.100.7']);
    });

    it('counts two Authorization headers against the address, even when one is a known token', async () => {
      cached.add(ALICE_TOKEN);
      const req = requestFor({ headers: bearer(ALICE_TOKEN), ip: '198.51.100.8' });
      req.rawHeaders.push('Authorization', `Bearer ${BOB_TOKEN}`);
      await pass(req);
      expect(keys()).toEqual(['default:ip:198.51.100.8']);
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });

    it.each([
      ['an IPv4 address as it is', '192.0.2.44', 'ip:192.0.2.44'],
      ['an IPv4-mapped IPv6 address as IPv4', '::ffff:192.0.2.44', 'ip:192.0.2.44'],
      ['an IPv6 address per /64', '2001:db8:aa:bb:1:2:3:4', 'ip:2001:db8:aa:bb::/64'],
      ['an unknown address under one name', undefined, 'ip:unknown'],
    ])('counts %s', async (_label, ip, tracker) => {
      await pass(requestFor({ ip }));
      expect(keys()).toEqual([`default:${tracker}`]);
    });

    it('shares one IPv6 budget across a /64, and not beyond', async () => {
      await pass(requestFor({ ip: '2001:db8:aa:bb:1:2:3:4' }));
      await pass(requestFor({ ip: '2001:db8:aa:bb:ffff:ffff:ffff:ffff' }));
      await pass(requestFor({ ip: '2001:db8:aa:bc::1' }));
      expect(keys()[0]).toBe(keys()[1]);
      expect(keys()[2]).not.toBe(keys()[0]);
    });

    it('is shared by every path, known or not, so a user has one budget', async () => {
      cached.add(ALICE_TOKEN);
      for (const [method, path] of [
        ['DELETE', '/plants/1'],
        ['GET', '/no/such/route'],
        ['GET', '/docs'],
      ]) {
        await pass(requestFor({ method, path, headers: bearer(ALICE_TOKEN) }));
      }
      expect(new Set(keys())).toEqual(new Set(['default:user:alice']));
    });

    it('is shared by all tokens of one user, and differs between users', async () => {
      cached.add(ALICE_TOKEN).add(ALICE_OTHER_TOKEN).add(BOB_TOKEN);
      await pass(requestFor({ headers: bearer(ALICE_TOKEN), ip: '192.0.2.1' }));
      await pass(requestFor({ headers: bearer(ALICE_OTHER_TOKEN), ip: '192.0.2.2' }));
      await pass(requestFor({ headers: bearer(BOB_TOKEN), ip: '192.0.2.1' }));
      expect(keys()).toEqual(['default:user:alice', 'default:user:alice', 'default:user:bob']);
    });

    it('keeps a user and an address apart even when they are spelled alike', async () => {
      tokens.cachedPrincipal.mockReturnValue({ subject: '192.0.2.1', scopes: [], kind: 'pst', tokenId: 't' });
      await pass(requestFor({ headers: bearer(ALICE_TOKEN), ip: '192.0.2.9' }));
      await pass(requestFor({ ip: '192.0.2.1' }));
      expect(keys()[0]).not.toBe(keys()[1]);
    });
  });

  describe('headers', () => {
    it('tell an allowed request the policy and what is left', async () => {
      cached.add(ALICE_TOKEN);
      expect(await pass(requestFor({ headers: bearer(ALICE_TOKEN) }))).toEqual({
        'RateLimit-Policy': `"default";q=${LIMIT};w=60`,
        RateLimit: '"default";r=2;t=57',
      });
      await pass(requestFor({ headers: bearer(ALICE_TOKEN) }));
      expect(await pass(requestFor({ headers: bearer(ALICE_TOKEN) }))).toEqual({
        'RateLimit-Policy': `"default";q=${LIMIT};w=60`,
        RateLimit: '"default";r=0;t=57',
      });
    });

    it("tell a token found by authentication its user's budget", async () => {
      for (let i = 0; i < LIMIT - 1; i += 1) await pass(requestFor({ ip: '192.0.2.3' }));
      const req = requestFor({ headers: bearer(ALICE_TOKEN), ip: '192.0.2.3' });
      const { headers } = await run(req);
      expect(headers.RateLimit).toBe('"default";r=0;t=57');
      await chargeUserOf(Object.assign(req, { user: PRINCIPALS[ALICE_TOKEN] }));
      expect(headers.RateLimit).toBe('"default";r=2;t=57');
    });

    it('never set the legacy X-RateLimit-* headers nor Retry-After on an allowed request', async () => {
      const names = Object.keys(await pass(requestFor()));
      expect(names.filter((name) => /^x-ratelimit/i.test(name))).toEqual([]);
      expect(names).not.toContain('Retry-After');
    });
  });

  describe('refusal', () => {
    const exhaust = async (req: () => FakeRequest) => {
      for (let i = 0; i < LIMIT; i += 1) await pass(req());
    };

    it('answers 429 past the limit, naming the limit, with Retry-After and both RateLimit headers', async () => {
      cached.add(ALICE_TOKEN);
      await exhaust(() => requestFor({ headers: bearer(ALICE_TOKEN) }));
      const { error, headers, next } = await run(requestFor({ method: 'POST', headers: bearer(ALICE_TOKEN) }));
      expect(next).not.toHaveBeenCalled();
      expect(error).toBeInstanceOf(HttpException);
      expect(error?.getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
      expect(error?.message).toContain(`at most ${LIMIT} per minute`);
      expect(error?.message).toContain('retry in 42 s');
      expect(headers).toEqual({
        'RateLimit-Policy': `"default";q=${LIMIT};w=60`,
        RateLimit: '"default";r=0;t=42',
        'Retry-After': '42',
      });
    });

    it('refuses the same user on any path and with any of their tokens, but not another user', async () => {
      cached.add(ALICE_TOKEN).add(ALICE_OTHER_TOKEN).add(BOB_TOKEN);
      await exhaust(() => requestFor({ headers: bearer(ALICE_TOKEN) }));
      const refused = await run(requestFor({ path: '/nowhere', headers: bearer(ALICE_OTHER_TOKEN) }));
      expect(refused.error?.getStatus()).toBe(429);
      await pass(requestFor({ headers: bearer(BOB_TOKEN) }));
    });

    it('refuses an address past its budget before any lookup, while a user already known passes', async () => {
      cached.add(ALICE_TOKEN);
      await exhaust(() => requestFor({ ip: '192.0.2.1' }));
      for (const token of [UNKNOWN_TOKEN, BOB_TOKEN]) {
        const { error, next } = await run(requestFor({ headers: bearer(token), ip: '192.0.2.1' }));
        expect(error?.getStatus()).toBe(429);
        expect(next).not.toHaveBeenCalled();
      }
      expect(tokens.authenticate).not.toHaveBeenCalled();
      await pass(requestFor({ headers: bearer(ALICE_TOKEN), ip: '192.0.2.1' }));
      await pass(requestFor({ ip: '192.0.2.2' }));
    });

    it('refuses a token found by authentication when its user is past the budget', async () => {
      hits.set('default:user:bob', LIMIT);
      const req = requestFor({ headers: bearer(BOB_TOKEN), ip: '192.0.2.5' });
      await pass(req);
      const charge = chargeUserOf(Object.assign(req, { user: PRINCIPALS[BOB_TOKEN] }));
      await expect(charge).rejects.toBeInstanceOf(HttpException);
      await expect(charge).rejects.toMatchObject({ status: 429 });
    });

    it('asks to retry after at least one second', async () => {
      storage.consume.mockResolvedValue({ consumed: LIMIT + 1, remaining: 0, refused: true, msBeforeNext: 0 });
      const { error, headers } = await run(requestFor());
      expect(error?.message).toMatch(/retry in 1 s/);
      expect(headers['Retry-After']).toBe('1');
      expect(headers.RateLimit).toBe('"default";r=0;t=0');
    });
  });

  it.each([
    ['GET', '/health/live'],
    ['GET', '/health/ready'],
    ['HEAD', '/health/live'],
    ['GET', '/Health/Ready/'],
  ])('never limits the probe %s %s: no count, no lookup, no headers', async (method, path) => {
    const headers = await pass(requestFor({ method, path, headers: bearer(ALICE_TOKEN) }));
    expect(storage.consume).not.toHaveBeenCalled();
    expect(tokens.authenticate).not.toHaveBeenCalled();
    expect(headers).toEqual({});
  });

  it.each([
    ['POST', '/health/live'],
    ['GET', '/health/other'],
    ['GET', '/health/live/x'],
  ])('limits %s %s, which is no probe', async (method, path) => {
    await pass(requestFor({ method, path }));
    expect(storage.consume).toHaveBeenCalledTimes(1);
  });

  it('passes a storage failure on, rather than letting the call through unlimited', async () => {
    storage.consume.mockRejectedValue(new Error('storage broke'));
    const { error, next } = await run(requestFor());
    expect((error as unknown as Error).message).toBe('storage broke');
    expect(next).not.toHaveBeenCalled();
  });
});
