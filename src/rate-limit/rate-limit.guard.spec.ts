import { ExecutionContext, HttpStatus } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SkipThrottle, ThrottlerException, getOptionsToken, getStorageToken } from '@nestjs/throttler';
import { Principal } from '../auth/principal';
import { TokensService } from '../auth/tokens.service';
import { RateLimitGuard } from './rate-limit.guard';

const LIMIT = 3;
const WINDOW_MS = 60_000;
const ALICE_TOKEN = `pst_${'A'.repeat(43)}`;
const ALICE_OTHER_TOKEN = `pst_${'a'.repeat(43)}`;
const BOB_TOKEN = `pst_${'B'.repeat(43)}`;
const UNKNOWN_TOKEN = `pst_${'U'.repeat(43)}`;
const PRINCIPALS: Record<string, Principal> = {
  [ALICE_TOKEN]: { subject: 'alice', scopes: ['plants:read', 'plants:write'], tokenId: 'alice-1' },
  [ALICE_OTHER_TOKEN]: { subject: 'alice', scopes: ['plants:read'], tokenId: 'alice-2' },
  [BOB_TOKEN]: { subject: 'bob', scopes: ['plants:read', 'plants:write'], tokenId: 'bob-1' },
};

class PlantsRoutes {
  create(): void {}
  list(): void {}
  remove(): void {}
}

class OtherRoutes {
  anything(): void {}
}

@SkipThrottle()
class ProbeRoutes {
  live(): void {}
}

interface FakeHttp {
  request: { headers: Record<string, string | undefined>; ip?: string };
  response: { setHeader: jest.Mock; header?: jest.Mock };
}

function contextFor(
  controller: abstract new () => object,
  handler: string,
  headers: Record<string, string | undefined> = {},
  ip: string | undefined = '203.0.113.5',
): { context: ExecutionContext; http: FakeHttp } {
  const http: FakeHttp = { request: { headers, ip }, response: { setHeader: jest.fn() } };
  const context = {
    getType: () => 'http',
    getHandler: () => (controller.prototype as Record<string, unknown>)[handler],
    getClass: () => controller,
    getArgs: () => [http.request, http.response, jest.fn()],
    getArgByIndex: (index: number) => [http.request, http.response, jest.fn()][index],
    switchToHttp: () => ({ getRequest: () => http.request, getResponse: () => http.response, getNext: () => jest.fn() }),
  } as unknown as ExecutionContext;
  return { context, http };
}

const headersOf = (http: FakeHttp) => Object.fromEntries(http.response.setHeader.mock.calls as Array<[string, string]>);

describe(RateLimitGuard.name, () => {
  let guard: RateLimitGuard;
  let tokens: { authenticate: jest.Mock };
  let hits: Map<string, number>;
  let storage: { increment: jest.Mock };

  beforeEach(async () => {
    tokens = { authenticate: jest.fn(async (secret: string) => PRINCIPALS[secret] ?? null) };
    hits = new Map();
    // Counts per key, blocking past the limit, with fixed times.
    storage = {
      increment: jest.fn(async (key: string, _ttl: number, limit: number) => {
        const totalHits = (hits.get(key) ?? 0) + 1;
        hits.set(key, totalHits);
        const isBlocked = totalHits > limit;
        return { totalHits, timeToExpire: 57, isBlocked, timeToBlockExpire: isBlocked ? 42 : 0 };
      }),
    };
    const moduleRef = await Test.createTestingModule({
      providers: [
        RateLimitGuard,
        Reflector,
        { provide: TokensService, useValue: tokens },
        { provide: getOptionsToken(), useValue: { throttlers: [{ name: 'default', ttl: WINDOW_MS, limit: LIMIT }] } },
        { provide: getStorageToken(), useValue: storage },
      ],
    }).compile();
    guard = moduleRef.get(RateLimitGuard);
    await guard.onModuleInit();
  });

  const keyOf = (call = 0) => storage.increment.mock.calls[call][0] as string;
  const pass = async (headers: Record<string, string | undefined> = {}, ip?: string, handler = 'list') => {
    const { context, http } = contextFor(PlantsRoutes, handler, headers, ip);
    await expect(guard.canActivate(context)).resolves.toBe(true);
    return http;
  };

  describe('tracker', () => {
    it('counts a call with a valid token against the token user', async () => {
      await pass({ authorization: `Bearer ${ALICE_TOKEN}` });
      expect(tokens.authenticate).toHaveBeenCalledWith(ALICE_TOKEN);
      expect(storage.increment).toHaveBeenCalledWith(expect.any(String), WINDOW_MS, LIMIT, WINDOW_MS, 'default');
      expect(keyOf()).toBe('plantstore:rate:default:user:alice');
    });

    it('reads the scheme case-insensitively, as the auth guard does', async () => {
      await pass({ authorization: `bearer ${ALICE_TOKEN}` });
      expect(keyOf()).toBe('plantstore:rate:default:user:alice');
    });

    it('counts a call without a token against the client address, without a lookup', async () => {
      await pass({}, '203.0.113.5');
      expect(tokens.authenticate).not.toHaveBeenCalled();
      expect(keyOf()).toBe('plantstore:rate:default:ip:203.0.113.5');
    });

    it.each([
      ['an unknown, expired or revoked token', `Bearer ${UNKNOWN_TOKEN}`],
      ['a malformed bearer value', 'Bearer not-a-token'],
      ['another scheme', `Basic ${Buffer.from('alice:secret').toString('base64')}`],
      ['an empty header', ''],
    ])('counts a call with %s against the client address', async (_label, authorization) => {
      await pass({ authorization }, '198.51.100.7');
      expect(keyOf()).toBe('plantstore:rate:default:ip:198.51.100.7');
    });

    it('counts against the client address when the token lookup fails, and does not fail itself', async () => {
      tokens.authenticate.mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      await pass({ authorization: `Bearer ${ALICE_TOKEN}` }, '192.0.2.1');
      expect(keyOf()).toBe('plantstore:rate:default:ip:192.0.2.1');
    });

    it.each([
      ['an IPv4 address as it is', '192.0.2.44', 'ip:192.0.2.44'],
      ['an IPv4-mapped IPv6 address as IPv4', '::ffff:192.0.2.44', 'ip:192.0.2.44'],
      ['an IPv6 address per /64', '2001:db8:aa:bb:1:2:3:4', 'ip:2001:db8:aa:bb::/64'],
      ['an unknown address under one name', undefined, 'ip:unknown'],
    ])('counts %s', async (_label, ip, tracker) => {
      const { context } = contextFor(PlantsRoutes, 'list', {}, ip);
      if (ip === undefined) (context.switchToHttp().getRequest() as FakeHttp['request']).ip = undefined;
      await guard.canActivate(context);
      expect(keyOf()).toBe(`plantstore:rate:default:${tracker}`);
    });

    it('shares one IPv6 budget across a /64, and not beyond', async () => {
      await pass({}, '2001:db8:aa:bb:1:2:3:4');
      await pass({}, '2001:db8:aa:bb:ffff:ffff:ffff:ffff');
      await pass({}, '2001:db8:aa:bc::1');
      expect(keyOf(0)).toBe(keyOf(1));
      expect(keyOf(2)).not.toBe(keyOf(0));
    });
  });

  describe('keys', () => {
    it('are shared by every route, so a user has one budget', async () => {
      const authorization = `Bearer ${ALICE_TOKEN}`;
      for (const [controller, handler] of [
        [PlantsRoutes, 'create'],
        [PlantsRoutes, 'remove'],
        [OtherRoutes, 'anything'],
      ] as const) {
        await expect(guard.canActivate(contextFor(controller, handler, { authorization }).context)).resolves.toBe(true);
      }
      expect(new Set(storage.increment.mock.calls.map(([key]) => key))).toEqual(new Set(['plantstore:rate:default:user:alice']));
    });

    it('are shared by all tokens of one user, and differ between users', async () => {
      await pass({ authorization: `Bearer ${ALICE_TOKEN}` }, '192.0.2.1');
      await pass({ authorization: `Bearer ${ALICE_OTHER_TOKEN}` }, '192.0.2.2');
      await pass({ authorization: `Bearer ${BOB_TOKEN}` }, '192.0.2.1');
      expect(keyOf(0)).toBe(keyOf(1));
      expect(keyOf(2)).toBe('plantstore:rate:default:user:bob');
    });

    it('keep a user and an address apart even when they are spelled alike', async () => {
      tokens.authenticate.mockResolvedValue({ subject: '192.0.2.1', scopes: [], tokenId: 't' });
      await pass({ authorization: `Bearer ${ALICE_TOKEN}` }, '192.0.2.9');
      await pass({}, '192.0.2.1');
      expect(keyOf(0)).not.toBe(keyOf(1));
    });
  });

  describe('headers', () => {
    it('tell an allowed request the policy and what is left', async () => {
      const first = await pass({ authorization: `Bearer ${ALICE_TOKEN}` });
      expect(headersOf(first)).toEqual({
        'RateLimit-Policy': `"default";q=${LIMIT};w=60`,
        RateLimit: '"default";r=2;t=57',
      });
      await pass({ authorization: `Bearer ${ALICE_TOKEN}` });
      const third = await pass({ authorization: `Bearer ${ALICE_TOKEN}` });
      expect(headersOf(third)).toEqual({
        'RateLimit-Policy': `"default";q=${LIMIT};w=60`,
        RateLimit: '"default";r=0;t=57',
      });
    });

    it('never set the legacy X-RateLimit-* headers nor Retry-After on an allowed request', async () => {
      const http = await pass();
      const names = Object.keys(headersOf(http));
      expect(names.filter((name) => /^x-ratelimit/i.test(name))).toEqual([]);
      expect(names).not.toContain('Retry-After');
    });
  });

  describe('refusal', () => {
    const exhaust = async (authorization: string) => {
      for (let i = 0; i < LIMIT; i += 1) await pass({ authorization });
    };

    it('answers 429 past the limit, naming the limit, with Retry-After and both RateLimit headers', async () => {
      await exhaust(`Bearer ${ALICE_TOKEN}`);
      const { context, http } = contextFor(PlantsRoutes, 'create', { authorization: `Bearer ${ALICE_TOKEN}` });
      const attempt = guard.canActivate(context);
      await expect(attempt).rejects.toBeInstanceOf(ThrottlerException);
      const error = (await attempt.catch((e: unknown) => e)) as ThrottlerException;
      expect(error.getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
      expect(error.message).toContain(`at most ${LIMIT} per minute`);
      expect(error.message).toContain('retry in 42 s');
      expect(headersOf(http)).toEqual({
        'RateLimit-Policy': `"default";q=${LIMIT};w=60`,
        RateLimit: '"default";r=0;t=42',
        'Retry-After': '42',
      });
    });

    it('refuses the same user on any route and with any of their tokens, but not another user', async () => {
      await exhaust(`Bearer ${ALICE_TOKEN}`);
      await expect(
        guard.canActivate(contextFor(OtherRoutes, 'anything', { authorization: `Bearer ${ALICE_OTHER_TOKEN}` }).context),
      ).rejects.toBeInstanceOf(ThrottlerException);
      await pass({ authorization: `Bearer ${BOB_TOKEN}` });
    });

    it('refuses an address past its budget even with an invalid token, while a valid user from it passes', async () => {
      for (let i = 0; i < LIMIT; i += 1) await pass({}, '192.0.2.1');
      await expect(
        guard.canActivate(contextFor(PlantsRoutes, 'list', { authorization: `Bearer ${UNKNOWN_TOKEN}` }, '192.0.2.1').context),
      ).rejects.toBeInstanceOf(ThrottlerException);
      await pass({ authorization: `Bearer ${ALICE_TOKEN}` }, '192.0.2.1');
      await pass({}, '192.0.2.2');
    });

    it('asks to retry after at least one second', async () => {
      storage.increment.mockResolvedValue({ totalHits: LIMIT + 1, timeToExpire: 0, isBlocked: true, timeToBlockExpire: 0 });
      const { context, http } = contextFor(PlantsRoutes, 'list');
      await expect(guard.canActivate(context)).rejects.toThrow(/retry in 1 s/);
      expect(headersOf(http)['Retry-After']).toBe('1');
      expect(headersOf(http).RateLimit).toBe('"default";r=0;t=0');
    });
  });

  it('skips routes marked @SkipThrottle(): no count and no headers', async () => {
    const { context, http } = contextFor(ProbeRoutes, 'live', { authorization: `Bearer ${ALICE_TOKEN}` });
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(storage.increment).not.toHaveBeenCalled();
    expect(tokens.authenticate).not.toHaveBeenCalled();
    expect(http.response.setHeader).not.toHaveBeenCalled();
  });

  it('passes a storage failure on, rather than letting the call through unlimited', async () => {
    storage.increment.mockRejectedValue(new Error('storage broke'));
    await expect(guard.canActivate(contextFor(PlantsRoutes, 'list').context)).rejects.toThrow('storage broke');
  });
});
