import { Module } from '@nestjs/common';
import { TokensRepository } from './tokens.repository';
import { TokensService } from './tokens.service';

/** Token storage and lookup, without HTTP: what the admin CLI needs. */
@Module({
  providers: [TokensService, TokensRepository],
  exports: [TokensService, TokensRepository],
})
export class TokensModule {}
