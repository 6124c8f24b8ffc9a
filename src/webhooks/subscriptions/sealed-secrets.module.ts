import { Module } from '@nestjs/common';
import { SealedPreviousSigningSecrets, SealedSigningSecrets } from './sealed-secrets.service';
import { WebhooksRepository } from '../webhooks.repository';

/** The signing secrets as stored sealed, without the API or the dispatcher: what the command line reseals. */
@Module({
  providers: [SealedSigningSecrets, SealedPreviousSigningSecrets, WebhooksRepository],
  exports: [SealedSigningSecrets, SealedPreviousSigningSecrets],
})
export class SealedSigningSecretsModule {}
