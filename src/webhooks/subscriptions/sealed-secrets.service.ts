import { Injectable } from '@nestjs/common';
import { SealedStore, SealedValue } from '../../secrets/sealed-store';
import { SubscriptionsRepository } from './subscriptions.repository';

/** The subscriptions' sealed signing secrets, for resealing them under a new key (`plantstore secrets reseal`). */
@Injectable()
export class SealedSigningSecrets implements SealedStore<bigint> {
  readonly name = 'webhook signing secrets';

  constructor(private readonly repository: SubscriptionsRepository) {}

  async listNotSealedUnder(prefix: string, after: bigint | undefined, limit: number): Promise<SealedValue<bigint>[]> {
    const rows = await this.repository.secretsNotStartingWith(prefix, after, limit);
    return rows.map(({ id, secret }) => ({ ref: id, sealed: secret }));
  }

  replace(id: bigint, sealed: string, resealed: string): Promise<boolean> {
    return this.repository.replaceSecret(id, sealed, resealed);
  }
}

/**
 * The secrets rotations replaced, while they still sign (sealed as the current ones are), for
 * resealing them too; those that no longer sign are never opened again and are left as they are.
 */
@Injectable()
export class SealedPreviousSigningSecrets implements SealedStore<bigint> {
  readonly name = 'webhook signing secrets being rotated out';

  constructor(private readonly repository: SubscriptionsRepository) {}

  async listNotSealedUnder(prefix: string, after: bigint | undefined, limit: number): Promise<SealedValue<bigint>[]> {
    const rows = await this.repository.previousSecretsNotStartingWith(prefix, after, limit);
    return rows.map(({ id, secret }) => ({ ref: id, sealed: secret }));
  }

  replace(id: bigint, sealed: string, resealed: string): Promise<boolean> {
    return this.repository.replacePreviousSecret(id, sealed, resealed);
  }
}
