import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiToken } from './api-token.entity';
import { TokensService } from './tokens.service';

/** Token storage and lookup, without HTTP: what the admin CLI needs. */
@Module({
  imports: [TypeOrmModule.forFeature([ApiToken])],
  providers: [TokensService],
  exports: [TokensService],
})
export class TokensModule {}
