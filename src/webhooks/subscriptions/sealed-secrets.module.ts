import { Module } from '@nestjs/common';
import { SealedPreviousSigningSecrets, SealedSigningSecrets } from './sealed-secrets.service';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { SubscriptionsRepository } from './subscriptions.repository';

/** The signing secrets as stored sealed, without the API or the dispatcher: what the command line reseals. */
@Module({
  providers: [SealedSigningSecrets, SealedPreviousSigningSecrets, SubscriptionsRepository, DeliveriesRepository],
  exports: [SealedSigningSecrets, SealedPreviousSigningSecrets],
})
export class SealedSigningSecretsModule {}
