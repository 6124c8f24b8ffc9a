import { BadRequestException, ExecutionContext, ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ApiOperation } from '@nestjs/swagger';
import { AuthenticationRequired, DuplicateAuthorization, InvalidToken, MissingScope } from './auth.errors';
import { BearerAuthGuard, JWT_REFUSED } from './bearer-auth.guard';
import { BearerStrategy } from './bearer.strategy';
import { Public } from './decorators/public.decorator';
import { RequireScopes } from './decorators/require-scopes.decorator';
import { Principal } from './principal';
import { JwtVerifier } from './oidc/jwt-verifier';
import { TokensService } from './tokens.service';

const SECRET = `pst_${'A'.repeat(43)}`;
const READER: Principal = { subject: 'alice', scopes: ['plants:read'], kind: 'pst', tokenId: 'reader' };
const WRITER: Principal = { subject: 'alice', scopes: ['plants:read', 'plants:write'], kind: 'pst', tokenId: 'writer' };

class RoutesController {
  @Public()
  open(): void {}

  @RequireScopes('plants:write')
  @ApiOperation({ summary: 'Write' })
  write(): void {}

  @RequireScopes('plants:read', 'plants:write')
  @ApiOperation({ summary: 'Read and write' })
  readWrite(): void {}

  plain(): void {}
}

@Public()
class PublicController {
  anything(): void {}
}

@RequireScopes('plants:read')
class ReadController {
  @RequireScopes('plants:write')
  @ApiOperation({ summary: 'Write' })
  write(): void {}

  inherited(): void {}
}

interface FakeHttp {
  request: {
    headers: Record<string, string | undefined>;
    rawHeaders?: string[];
    query: Record<string, string>;
    body?: unknown;
    user?: Principal;
  };
  response: { setHeader: jest.Mock };
}

function contextFor(
  controller: abstract new () => object,
  handler: string,
  headers: Record<string, string | undefined> = {},
  query: Record<string, string> = {},
): { context: ExecutionContext; http: FakeHttp } {
  const http: FakeHttp = { request: { headers, query }, response: { setHeader: jest.fn() } };
  const context = {
    getType: () => 'http',
    getHandler: () => (controller.prototype as Record<string, unknown>)[handler],
    getClass: () => controller,
    getArgs: () => [http.request, http.response, jest.fn()],
    getArgByIndex: (index: number) => [http.request, http.response, jest.fn()][index],
    switchToHttp: () => ({
      getRequest: () => http.request,
      getResponse: () => http.response,
      getNext: () => jest.fn(),
    }),
    switchToRpc: () => {
      throw new Error('not RPC');
    },
    switchToWs: () => {
      throw new Error('not WS');
    },
  } as unknown as ExecutionContext;
  return { context, http };
}

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

describe(BearerAuthGuard.name, () => {
  let guard: BearerAuthGuard;
  let tokens: { authenticate: jest.Mock };
  /** The identity provider's tokens: only `aaa.bbb.ccc` looks like one, and none is valid. */
  const jwts = { accepts: (token: string) => token === 'aaa.bbb.ccc', authenticate: async () => null };

  beforeEach(async () => {
    tokens = {
      authenticate: jest.fn(async (secret: string) => (secret === SECRET ? WRITER : null)),
    };
    const moduleRef = await Test.createTestingModule({
      providers: [
        BearerAuthGuard,
        BearerStrategy,
        Reflector,
        { provide: TokensService, useValue: tokens },
        { provide: JwtVerifier, useValue: jwts },
      ],
    }).compile();
    guard = moduleRef.get(BearerAuthGuard);
  });

  describe('public routes', () => {
    it.each([
      ['a @Public() handler', RoutesController, 'open'],
      ['a handler of a @Public() class', PublicController, 'anything'],
    ])('lets %s through without a token', async (_label, controller, handler) => {
      const { context, http } = contextFor(controller, handler);
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(tokens.authenticate).not.toHaveBeenCalled();
      expect(http.response.setHeader).not.toHaveBeenCalled();
      expect(http.request.user).toBeUndefined();
    });
  });

  describe('authentication', () => {
    it('lets a valid token through and puts its principal on the request', async () => {
      const { context, http } = contextFor(RoutesController, 'write', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(tokens.authenticate).toHaveBeenCalledWith(SECRET);
      expect(http.request.user).toEqual(WRITER);
      expect(http.response.setHeader).not.toHaveBeenCalled();
    });

    it('lets any valid token through a route without required scopes', async () => {
      tokens.authenticate.mockResolvedValue({ ...READER, scopes: [] });
      const { context } = contextFor(RoutesController, 'plain', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(context)).resolves.toBe(true);
    });

    it('answers a request without a token with 401 and a bare challenge', async () => {
      const { context, http } = contextFor(RoutesController, 'plain');
      const attempt = guard.canActivate(context);
      await expect(attempt).rejects.toBeInstanceOf(UnauthorizedException);
      await expect(attempt).rejects.toThrow(new AuthenticationRequired().message);
      expect(http.response.setHeader).toHaveBeenCalledWith('WWW-Authenticate', 'Bearer realm="plant-store"');
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });

    it('answers an unknown token with 401 invalid_token', async () => {
      const { context, http } = contextFor(RoutesController, 'plain', {
        authorization: `Bearer pst_${'Z'.repeat(43)}`,
      });
      const attempt = guard.canActivate(context);
      await expect(attempt).rejects.toBeInstanceOf(UnauthorizedException);
      await expect(attempt).rejects.toThrow(new InvalidToken().message);
      expect(http.response.setHeader).toHaveBeenCalledWith(
        'WWW-Authenticate',
        'Bearer realm="plant-store", error="invalid_token"',
      );
    });

    it('lets a token after several spaces through (RFC 6750: 1*SP), as the rate limit counts it', async () => {
      const { context, http } = contextFor(RoutesController, 'write', { authorization: `Bearer   ${SECRET}` });
      await expect(guard.canActivate(context)).resolves.toBe(true);
      expect(tokens.authenticate).toHaveBeenCalledWith(SECRET);
      expect(http.request.user).toEqual(WRITER);
    });

    it.each([`Bearer ${SECRET} extra`, 'Bearer', `Bearer ${SECRET}!`])(
      'answers a malformed bearer value with 401 invalid_token, without a lookup: %p',
      async (authorization) => {
        const { context, http } = contextFor(RoutesController, 'plain', { authorization });
        await expect(guard.canActivate(context)).rejects.toBeInstanceOf(UnauthorizedException);
        expect(tokens.authenticate).not.toHaveBeenCalled();
        expect(http.response.setHeader).toHaveBeenCalledWith(
          'WWW-Authenticate',
          'Bearer realm="plant-store", error="invalid_token"',
        );
      },
    );

    it('answers two Authorization headers with 400, whichever comes first, without a lookup', async () => {
      for (const order of [
        [`Bearer ${SECRET}`, `Bearer pst_${'Z'.repeat(43)}`],
        [`Bearer pst_${'Z'.repeat(43)}`, `Bearer ${SECRET}`],
        [`Bearer ${SECRET}`, `Bearer ${SECRET}`],
      ]) {
        const { context, http } = contextFor(RoutesController, 'plain', { authorization: order[0] });
        http.request.rawHeaders = ['Host', 'x', 'Authorization', order[0], 'AUTHORIZATION', order[1]];
        const attempt = guard.canActivate(context);
        await expect(attempt).rejects.toBeInstanceOf(BadRequestException);
        await expect(attempt).rejects.toThrow(new DuplicateAuthorization().message);
      }
      expect(tokens.authenticate).not.toHaveBeenCalled();
    });

    it('leaves two Authorization headers alone on a public route', async () => {
      const { context, http } = contextFor(RoutesController, 'open', { authorization: `Bearer ${SECRET}` });
      http.request.rawHeaders = ['Authorization', `Bearer ${SECRET}`, 'Authorization', 'Basic eA=='];
      await expect(guard.canActivate(context)).resolves.toBe(true);
    });

    it('ignores a token in the query string', async () => {
      const { context, http } = contextFor(RoutesController, 'plain', {}, { access_token: SECRET });
      await expect(guard.canActivate(context)).rejects.toBeInstanceOf(UnauthorizedException);
      expect(tokens.authenticate).not.toHaveBeenCalled();
      expect(http.response.setHeader).toHaveBeenCalledWith('WWW-Authenticate', 'Bearer realm="plant-store"');
    });

    it('passes a failing token lookup on as it is, so an outage is not a 401', async () => {
      const outage = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      tokens.authenticate.mockRejectedValue(outage);
      const { context, http } = contextFor(RoutesController, 'plain', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(context)).rejects.toBe(outage);
      expect(http.response.setHeader).not.toHaveBeenCalled();
    });
  });

  describe('scopes', () => {
    it('answers a token without the required scope with 403 insufficient_scope', async () => {
      tokens.authenticate.mockResolvedValue(READER);
      const { context, http } = contextFor(RoutesController, 'write', { authorization: `Bearer ${SECRET}` });
      const attempt = guard.canActivate(context);
      await expect(attempt).rejects.toBeInstanceOf(ForbiddenException);
      await expect(attempt).rejects.toThrow(new MissingScope(['plants:write']).message);
      expect(http.response.setHeader).toHaveBeenCalledWith(
        'WWW-Authenticate',
        'Bearer realm="plant-store", error="insufficient_scope", scope="plants:write"',
      );
    });

    it('names every required scope in the challenge and only the missing ones in the message', async () => {
      tokens.authenticate.mockResolvedValue(READER);
      const { context, http } = contextFor(RoutesController, 'readWrite', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(context)).rejects.toThrow(new MissingScope(['plants:write']).message);
      expect(http.response.setHeader).toHaveBeenCalledWith(
        'WWW-Authenticate',
        'Bearer realm="plant-store", error="insufficient_scope", scope="plants:read plants:write"',
      );
    });

    it('lists several missing scopes', async () => {
      tokens.authenticate.mockResolvedValue({ ...READER, scopes: [] });
      const { context } = contextFor(RoutesController, 'readWrite', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(context)).rejects.toThrow(
        new MissingScope(['plants:read', 'plants:write']).message,
      );
    });

    it('takes the scopes of the handler over those of its class', async () => {
      tokens.authenticate.mockResolvedValue(READER);
      const write = contextFor(ReadController, 'write', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(write.context)).rejects.toBeInstanceOf(ForbiddenException);

      const inherited = contextFor(ReadController, 'inherited', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(inherited.context)).resolves.toBe(true);
    });

    it('applies the scopes of the class to its handlers', async () => {
      tokens.authenticate.mockResolvedValue({ ...WRITER, scopes: ['plants:write'] });
      const { context, http } = contextFor(ReadController, 'inherited', { authorization: `Bearer ${SECRET}` });
      await expect(guard.canActivate(context)).rejects.toThrow(new MissingScope(['plants:read']).message);
      expect(http.response.setHeader).toHaveBeenCalledWith(
        'WWW-Authenticate',
        'Bearer realm="plant-store", error="insufficient_scope", scope="plants:read"',
      );
    });
  });

  describe('handleRequest', () => {
    it('rethrows an error from the strategy', () => {
      const error = new Error('lookup failed');
      const { context, http } = contextFor(RoutesController, 'plain', { authorization: `Bearer ${SECRET}` });
      expect(() => guard.handleRequest(error, WRITER, undefined, context)).toThrow(error);
      expect(http.response.setHeader).not.toHaveBeenCalled();
    });

    it('returns the user when there is one', () => {
      const { context, http } = contextFor(RoutesController, 'plain', { authorization: `Bearer ${SECRET}` });
      expect(guard.handleRequest(null, WRITER, undefined, context)).toBe(WRITER);
      expect(http.response.setHeader).not.toHaveBeenCalled();
    });

    it.each([`Bearer ${SECRET}`, 'bearer x', 'BEARER x', 'Bearer', 'Bearer\tx', 'Bearer a b'])(
      'answers no user with the Authorization header %p with invalid_token',
      (authorization) => {
        const { context, http } = contextFor(RoutesController, 'plain', { authorization });
        const error = thrownBy(() => guard.handleRequest(null, false, undefined, context));
        expect(error).toBeInstanceOf(UnauthorizedException);
        expect((error as Error).message).toBe(new InvalidToken().message);
        expect(http.response.setHeader).toHaveBeenCalledWith(
          'WWW-Authenticate',
          'Bearer realm="plant-store", error="invalid_token"',
        );
      },
    );

    it('describes a refused JWT in the challenge, the same whatever failed', () => {
      const { context, http } = contextFor(RoutesController, 'plain', { authorization: 'Bearer aaa.bbb.ccc' });
      const error = thrownBy(() => guard.handleRequest(null, false, undefined, context));
      expect(error).toBeInstanceOf(UnauthorizedException);
      expect((error as Error).message).toBe(new InvalidToken().message);
      expect(http.response.setHeader).toHaveBeenCalledWith(
        'WWW-Authenticate',
        `Bearer realm="plant-store", error="invalid_token", error_description="${JWT_REFUSED}"`,
      );
    });

    it.each([undefined, '', 'Basic dXNlcjpwYXNz', 'Bearerx abc', 'Token pst_x', ' Bearer x'])(
      'answers no user with the Authorization header %p with a bare challenge',
      (authorization) => {
        const { context, http } = contextFor(RoutesController, 'plain', { authorization });
        const error = thrownBy(() => guard.handleRequest(null, null, undefined, context));
        expect(error).toBeInstanceOf(UnauthorizedException);
        expect((error as Error).message).toBe(new AuthenticationRequired().message);
        expect(http.response.setHeader).toHaveBeenCalledWith('WWW-Authenticate', 'Bearer realm="plant-store"');
      },
    );
  });
});
