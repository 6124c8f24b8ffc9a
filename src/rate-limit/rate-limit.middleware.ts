import { Injectable, NestMiddleware } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NextFunction, Request, Response } from 'express';
import { readAuthorization } from '../auth/authorization';
import { JwtVerifier } from '../auth/oidc/jwt-verifier';
import { TokensService } from '../auth/tokens.service';
import { clientAddress } from '../common/http/client-address';
import { AppConfig } from '../config/configuration';
import { addressBucket } from './ip-network';
import { TooManyRequests } from './rate-limit.errors';
import { RATE_LIMIT_WINDOW_MS } from './rate-limit.limits';
import { RateLimitStorage } from './rate-limit.storage';

const POLICY_NAME = 'default';

/** Health probes are never limited: a load balancer must always learn the truth. */
const PROBE = /^\/health\/(?:live|ready)\/?$/i;

/**
 * Requests that carried a token this instance did not know yet, so were counted against their
 * address: once authentication has found the token valid, UserBudgetGuard counts them against the
 * user as well (chargeUserOf).
 */
const userCharges = new WeakMap<object, (subject: string) => Promise<void>>();

/**
 * Counts an authenticated request against its user if the rate limit could not tell its user
 * before; undefined when there is nothing to count.
 */
export function chargeUserOf(req: object & { user?: { subject: string } }): Promise<void> | undefined {
  const charge = userCharges.get(req);
  if (!charge || !req.user) return undefined;
  userCharges.delete(req);
  return charge(req.user.subject);
}

/** Whether a request is counted (and its answer carries the RateLimit fields): all but the probes. */
export function isRateLimited(method: string, path: string): boolean {
  return !((method === 'GET' || method === 'HEAD') && PROBE.test(path));
}

/**
 * The global rate limit, the first thing a request meets after its id, log line and metrics are set
 * up: before routing (unknown paths and the docs are limited too), authentication and the body.
 *
 * The bucket is chosen before any lookup. A token this instance already knows as valid (its lookup
 * is in TokensService's cache, or the JWT is in JwtVerifier's) counts against its user; every other call (no token, an unknown one,
 * one not looked up yet) counts against the client address (per /64 for IPv6; see TRUST_PROXY), so
 * a refused caller costs no database query and no body work. A token not known yet is looked up by
 * authentication, within its address's budget; if it is valid, the call then counts against its
 * user as well (UserBudgetGuard), so every call of a user, whatever the token, spends that user's
 * one budget.
 *
 * Every limited response carries the IETF RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers); a refused one is a 429 with Retry-After.
 */
@Injectable()
export class RateLimitMiddleware implements NestMiddleware {
  private readonly limit: number;
  private readonly policy: string;

  constructor(
    private readonly storage: RateLimitStorage,
    private readonly tokens: TokensService,
    private readonly jwts: JwtVerifier,
    config: ConfigService<AppConfig, true>,
  ) {
    this.limit = config.get('rateLimit.perMinute', { infer: true });
    this.policy = `"${POLICY_NAME}";q=${this.limit};w=${RATE_LIMIT_WINDOW_MS / 1000}`;
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (!isRateLimited(req.method, req.path)) return next();

    const authorization = readAuthorization(req);
    const secret = authorization.kind === 'bearer' ? authorization.secret : null;
    const known = secret === null ? null : (this.tokens.cachedPrincipal(secret) ?? this.jwts.cachedPrincipal(secret));
    if (known) {
      await this.count(`user:${known.subject}`, res);
      return next();
    }
    await this.count(`ip:${addressBucket(clientAddress(req) ?? 'unknown')}`, res);
    if (secret !== null) userCharges.set(req, (subject) => this.count(`user:${subject}`, res));
    next();
  }

  private async count(tracker: string, res: Response): Promise<void> {
    const { remaining, refused, msBeforeNext } = await this.storage.consume(`${POLICY_NAME}:${tracker}`);
    const resetSeconds = Math.max(0, Math.ceil(msBeforeNext / 1000));
    res.setHeader('RateLimit-Policy', this.policy);
    res.setHeader('RateLimit', `"${POLICY_NAME}";r=${remaining};t=${resetSeconds}`);
    if (!refused) return;

    const retryAfter = Math.max(1, resetSeconds);
    res.setHeader('Retry-After', String(retryAfter));
    throw new TooManyRequests(this.limit, retryAfter);
  }
}
