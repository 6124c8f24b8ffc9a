import { Global, Module } from '@nestjs/common';
import { SecretsModule } from '../secrets/secrets.module';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { SealedAnswers } from './sealed-answers';

/** Idempotency-Key for the POST routes that create something (@Idempotent()). */
@Global()
@Module({
  imports: [SecretsModule],
  providers: [IdempotencyRepository, IdempotencyService, SealedAnswers],
  exports: [IdempotencyService, SealedAnswers],
})
export class IdempotencyModule {}
