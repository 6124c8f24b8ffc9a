import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerException,
  ThrottlerGuard,
  ThrottlerModuleOptions,
  ThrottlerRequest,
  ThrottlerStorage,
} from '@nestjs/throttler';
import { Request, Response } from 'express';
import { bearerSecretOf } from '../auth/token-secret';
import { TokensService } from '../auth/tokens.service';

/**
 * The global rate limit. It runs before authentication so that guessing tokens is limited too:
 * a call with a valid token is counted against the token's user (all of that user's tokens and
 * routes share one budget), any other call against the client address (see TRUST_PROXY).
 *
 * Every limited response carries the IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers); a refused one also carries Retry-After.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly tokens: TokensService,
  ) {
    super(options, storage, reflector);
  }

  protected override async getTracker(req: Request): Promise<string> {
    const secret = bearerSecretOf(req.headers.authorization);
    // The lookup is the guard's own, cached; a database failure is the auth guard's to report.
    const principal = secret ? await this.tokens.authenticate(secret).catch(() => null) : null;
    // IPv6 clients are counted per /64: one host usually holds the whole prefix.
    return principal ? `user:${principal.subject}` : `ip:${normalizeIp(req.ip ?? 'unknown')}`;
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `plantstore:rate:${throttlerName}:${tracker}`;
  }

  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = request;
    const { req, res } = this.getRequestResponse(context) as { req: Request; res: Response };
    const name = throttler.name ?? 'default';
    const key = generateKey(context, await getTracker(req, context), name);
    const { totalHits, timeToExpire, isBlocked, timeToBlockExpire } = await this.storageService.increment(
      key,
      ttl,
      limit,
      blockDuration,
      name,
    );

    const resetSeconds = isBlocked ? timeToBlockExpire : timeToExpire;
    res.setHeader('RateLimit-Policy', `"${name}";q=${limit};w=${Math.ceil(ttl / 1000)}`);
    res.setHeader('RateLimit', `"${name}";r=${Math.max(0, limit - totalHits)};t=${Math.max(0, resetSeconds)}`);
    if (isBlocked) {
      res.setHeader('Retry-After', String(Math.max(1, timeToBlockExpire)));
      throw new ThrottlerException(
        `Too many requests: at most ${limit} per minute; retry in ${Math.max(1, timeToBlockExpire)} s`,
      );
    }
    return true;
  }
}
