import { Injectable } from '@nestjs/common';
import { SealedStore, SealedValue } from '../secrets/sealed-store';
import { WebhooksRepository } from './webhooks.repository';

/** The subscriptions' sealed signing secrets, for resealing them under a new key (`plantstore secrets reseal`). */
@Injectable()
export class SealedSigningSecrets implements SealedStore<bigint> {
  readonly name = 'webhook signing secrets';

  constructor(private readonly repository: WebhooksRepository) {}

  async listNotSealedUnder(prefix: string, after: bigint | undefined, limit: number): Promise<SealedValue<bigint>[]> {
    const rows = await this.repository.secretsNotStartingWith(prefix, after, limit);
    return rows.map(({ id, secret }) => ({ ref: id, sealed: secret }));
  }

  replace(id: bigint, sealed: string, resealed: string): Promise<boolean> {
    return this.repository.replaceSecret(id, sealed, resealed);
  }
}
