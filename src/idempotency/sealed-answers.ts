import { Injectable } from '@nestjs/common';
import { SealedStore, SealedValue } from '../secrets/sealed-store';
import { IdempotencyRepository, KeyRef } from './idempotency.repository';

/** Stored answers that carry a secret (a webhook signing secret) are sealed; the marker tells them apart. */
export const SEALED_ANSWER = 'sealed:';

/** The sealed stored answers, for resealing them under a new key (`plantstore secrets reseal`). */
@Injectable()
export class SealedAnswers implements SealedStore<KeyRef> {
  readonly name = 'stored idempotent answers';

  constructor(private readonly repository: IdempotencyRepository) {}

  async listNotSealedUnder(prefix: string, after: KeyRef | undefined, limit: number): Promise<SealedValue<KeyRef>[]> {
    const rows = await this.repository.sealedAnswers(SEALED_ANSWER, prefix, after, limit);
    return rows.map(({ ref, response }) => ({ ref, sealed: response.slice(SEALED_ANSWER.length) }));
  }

  replace(ref: KeyRef, sealed: string, resealed: string): Promise<boolean> {
    return this.repository.replaceAnswer(ref, SEALED_ANSWER + sealed, SEALED_ANSWER + resealed);
  }
}
