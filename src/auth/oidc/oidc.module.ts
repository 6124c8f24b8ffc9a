import { Module } from '@nestjs/common';
import { JwtVerifier } from './jwt-verifier';

/** Access tokens of the configured OpenID Connect issuer (OIDC_ISSUER); inert when it is unset. */
@Module({
  providers: [JwtVerifier],
  exports: [JwtVerifier],
})
export class OidcModule {}
