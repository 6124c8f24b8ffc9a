import {
  BadRequestException,
  ForbiddenException,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { errorDoc } from '../common/openapi/error-doc';
import { Scope } from './scopes';

/** Two Authorization headers: which credential counts is not a guess the service makes. */
export class DuplicateAuthorization extends BadRequestException {
  static readonly doc = errorDoc(new DuplicateAuthorization(), 'More than one Authorization header');

  constructor() {
    super('Send at most one Authorization header');
  }
}

/** No bearer token at all (or another scheme). */
export class AuthenticationRequired extends UnauthorizedException {
  static readonly doc = errorDoc(new AuthenticationRequired(), 'No bearer token');

  constructor() {
    super('Authentication required: send Authorization: Bearer <token>');
  }
}

/** A bearer token that is unknown, malformed, expired or revoked. */
export class InvalidToken extends UnauthorizedException {
  static readonly doc = errorDoc(new InvalidToken(), 'An unknown, malformed, expired or revoked token');

  constructor() {
    super('The access token is invalid, expired or revoked');
  }
}

export class MissingScope extends ForbiddenException {
  static readonly doc = errorDoc(new MissingScope(['plants:write']), 'The token lacks the scope this call needs');

  constructor(missing: readonly Scope[]) {
    super(`This token lacks the scope ${missing.join(', ')}`);
  }
}

/** A JWT cannot be checked: the provider's keys cannot be had. Not a 401, since the token may well be valid. */
export class SigningKeysUnavailable extends ServiceUnavailableException {
  static readonly doc = errorDoc(
    new SigningKeysUnavailable(),
    "An identity provider's access token (with `OIDC_ISSUER` set) that cannot be checked, since the provider's signing keys cannot be fetched; retry later",
  );

  constructor() {
    super(
      "The identity provider's signing keys cannot be fetched, so this access token cannot be checked; retry later",
    );
  }
}
