import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DEVELOPMENT_KEY, provideDevelopmentKey } from './development-key';
import { SecretsService } from './secrets.service';

/** Sealing of stored secrets, shared by webhooks (signing secrets) and idempotency (answers that carry one). */
@Module({
  providers: [{ provide: DEVELOPMENT_KEY, inject: [ConfigService], useFactory: provideDevelopmentKey }, SecretsService],
  exports: [SecretsService],
})
export class SecretsModule {}
