import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiToken } from './api-token.entity';
import { BearerStrategy } from './bearer.strategy';
import { TokensService } from './tokens.service';

@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiToken])],
  providers: [TokensService, BearerStrategy],
  exports: [TokensService],
})
export class AuthModule {}
