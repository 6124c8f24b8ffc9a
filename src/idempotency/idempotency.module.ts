import { Global, Module } from '@nestjs/common';
import { SecretsModule } from '../secrets/secrets.module';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';

/** Idempotency-Key for the POST routes that create something (@Idempotent()). */
@Global()
@Module({
  imports: [SecretsModule],
  providers: [IdempotencyRepository, IdempotencyService],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
