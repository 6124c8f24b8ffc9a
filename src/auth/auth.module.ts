import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { BearerStrategy } from './bearer.strategy';
import { OidcModule } from './oidc/oidc.module';
import { TokensModule } from './tokens.module';

/**
 * Bearer authentication for the HTTP API. The guard itself is global, declared in AppModule.
 * (Passport keeps strategies in a process-wide registry, so only the API should register one.)
 */
@Module({
  imports: [PassportModule, TokensModule, OidcModule],
  providers: [BearerStrategy],
  exports: [TokensModule, OidcModule],
})
export class AuthModule {}
