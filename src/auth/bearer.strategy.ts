import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { Principal } from './principal';
import { TokensService } from './tokens.service';

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly tokens: TokensService) {
    super();
  }

  validate(token: string): Promise<Principal | null> {
    return this.tokens.authenticate(token);
  }

  /**
   * Only the Authorization header may carry a token. passport-http-bearer would also take
   * `access_token` from the query string or the body, where tokens end up in logs and histories.
   */
  override authenticate(req: Request, options?: object): void {
    const headersOnly = { headers: { authorization: req.headers.authorization } } as Request;
    super.authenticate(headersOnly, options);
  }
}
