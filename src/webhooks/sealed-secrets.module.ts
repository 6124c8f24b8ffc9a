import { Module } from '@nestjs/common';
import { SealedSigningSecrets } from './sealed-secrets.service';
import { WebhooksRepository } from './webhooks.repository';

/** The signing secrets as stored sealed, without the API or the dispatcher: what the command line reseals. */
@Module({
  providers: [SealedSigningSecrets, WebhooksRepository],
  exports: [SealedSigningSecrets],
})
export class SealedSigningSecretsModule {}
