import { Module } from '@nestjs/common';
import { SecretsService } from './secrets.service';

/** Sealing of stored secrets, shared by webhooks (signing secrets) and idempotency (answers that carry one). */
@Module({
  providers: [SecretsService],
  exports: [SecretsService],
})
export class SecretsModule {}
