import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { readAuthorization } from './authorization';
import { JwtVerifier } from './oidc/jwt-verifier';
import { Principal } from './principal';
import { TokensService } from './tokens.service';

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly tokens: TokensService,
    private readonly jwts: JwtVerifier,
  ) {
    super();
  }

  /** A compact JWS goes to the identity provider's keys (when OIDC_ISSUER is set), anything else to the `pst_` tokens. */
  validate(token: string): Promise<Principal | null> {
    return this.jwts.accepts(token) ? this.jwts.authenticate(token) : this.tokens.authenticate(token);
  }

  /**
   * Only the Authorization header may carry a token. passport-http-bearer would also take
   * `access_token` from the query string or the body, where tokens end up in logs and histories.
   * It gets the header as readAuthorization reads it (`Bearer` and exactly one space: its own
   * parser splits on one space), or none, so it agrees with the rate limit on what is a token.
   */
  override authenticate(req: Request, options?: object): void {
    const authorization = readAuthorization(req);
    const header = authorization.kind === 'bearer' ? `Bearer ${authorization.secret}` : undefined;
    super.authenticate({ headers: { authorization: header } } as Request, options);
  }
}
