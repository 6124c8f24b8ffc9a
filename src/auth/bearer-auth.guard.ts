import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { Request, Response } from 'express';
import { AuthenticationRequired, DuplicateAuthorization, InvalidToken, MissingScope } from './auth.errors';
import { readAuthorization } from './authorization';
import { JwtVerifier } from './oidc/jwt-verifier';
import { IS_PUBLIC_KEY } from './decorators/public.decorator';
import { REQUIRED_SCOPES_KEY } from './decorators/require-scopes.decorator';
import { Principal, REALM } from './principal';
import { Scope } from './scopes';

/** The `error_description` of a refused JWT (RFC 6750 section 3). */
export const JWT_REFUSED = 'The access token is invalid or expired';

/**
 * The global guard: every route needs a valid bearer token unless marked @Public(), and the token
 * must carry the route's @RequireScopes(). Challenges follow RFC 6750.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(
    private readonly reflector: Reflector,
    private readonly jwts: JwtVerifier,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) return true;
    // Which of two credentials counts is not a guess the service makes (Node would keep the first).
    if (readAuthorization(context.switchToHttp().getRequest<Request>()).kind === 'duplicate') {
      throw new DuplicateAuthorization();
    }

    await super.canActivate(context);

    const required = this.reflector.getAllAndOverride<Scope[]>(REQUIRED_SCOPES_KEY, targets) ?? [];
    const principal = context.switchToHttp().getRequest<Request & { user: Principal }>().user;
    const missing = required.filter((scope) => !principal.scopes.includes(scope));
    if (missing.length > 0) {
      this.challenge(context, `error="insufficient_scope", scope="${required.join(' ')}"`);
      throw new MissingScope(missing);
    }
    return true;
  }

  /** Called by passport with the strategy's outcome; decides between the two kinds of 401. */
  override handleRequest<TUser = Principal>(
    error: unknown,
    user: TUser | false | null,
    _info: unknown,
    context: ExecutionContext,
  ): TUser {
    if (error) throw error;
    if (user) return user;

    const authorization = readAuthorization(context.switchToHttp().getRequest<Request>());
    const { kind } = authorization;
    if (kind === 'bearer' || kind === 'invalid-bearer') {
      // One description for every refused JWT, whatever failed: it says nothing about keys.
      const isJwt = kind === 'bearer' && this.jwts.accepts(authorization.secret);
      this.challenge(
        context,
        isJwt ? `error="invalid_token", error_description="${JWT_REFUSED}"` : 'error="invalid_token"',
      );
      throw new InvalidToken();
    }
    this.challenge(context);
    throw new AuthenticationRequired();
  }

  private challenge(context: ExecutionContext, params?: string): void {
    const value = [`Bearer realm="${REALM}"`, params].filter(Boolean).join(', ');
    context.switchToHttp().getResponse<Response>().setHeader('WWW-Authenticate', value);
  }
}
