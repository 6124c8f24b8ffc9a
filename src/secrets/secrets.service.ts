import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { DEVELOPMENT_KEY } from './development-key';
import { SecretBox, UnknownSealingKey, sealedPrefix } from './secret-box';
import { ResealReport, SealedStore } from './sealed-store';

/** Values read and rewritten per statement when resealing. */
export const RESEAL_BATCH = 500;

/**
 * Seals and opens stored secrets under the operator's WEBHOOK_SECRET_KEY (or, in development on the
 * embedded database, a development key: development-key.ts), for every part of the service that
 * keeps one. Without a key nothing can be sealed; each user decides what that means for it
 * (webhooks are off, a sealed answer cannot be stored).
 */
@Injectable()
export class SecretsService {
  private readonly logger = new Logger(SecretsService.name);
  private readonly box?: SecretBox;
  private readonly unknownKeys = new Map<string, number>();

  constructor(config: ConfigService<AppConfig, true>, @Optional() @Inject(DEVELOPMENT_KEY) developmentKey?: Buffer) {
    const { keys } = config.get('secrets', { infer: true });
    if (keys.length > 0) this.box = new SecretBox(keys);
    else if (developmentKey) this.box = new SecretBox([developmentKey]);
  }

  /** Whether a key is configured. */
  get configured(): boolean {
    return this.box !== undefined;
  }

  /** The ids of the configured keys, the sealing one first; none without a key. */
  get keyIds(): string[] {
    return this.box?.keyIds ?? [];
  }

  /** How many values this instance could not open because their key is not configured, by key id. */
  get unopenedByKey(): ReadonlyMap<string, number> {
    return this.unknownKeys;
  }

  seal(plain: string): string {
    return this.sealer().seal(plain);
  }

  /**
   * Throws UnknownSealingKey when the text was sealed under a key that is not configured, which is
   * also logged and counted: a key retired too early, or rolled out in the wrong order.
   */
  open(sealed: string): string {
    try {
      return this.sealer().open(sealed);
    } catch (error) {
      if (error instanceof UnknownSealingKey) this.metUnknownKey(error.keyId);
      throw error;
    }
  }

  /**
   * Seals again under the sealing key every value of `store` sealed under another, in batches, each
   * value rewritten only if it did not change meanwhile: safe to run while instances serve, and to
   * run again (what is done is not listed again). Values under keys not configured are counted and
   * left as they are.
   */
  async reseal<Ref>(store: SealedStore<Ref>, batchSize = RESEAL_BATCH): Promise<ResealReport> {
    const box = this.sealer();
    const prefix = sealedPrefix(box.sealingKeyId);
    const report: ResealReport = { name: store.name, resealed: 0, changed: 0, unknownKeys: {}, unreadable: 0 };
    let after: Ref | undefined;
    for (;;) {
      const batch = await store.listNotSealedUnder(prefix, after, batchSize);
      for (const { ref, sealed } of batch) {
        let resealed: string;
        try {
          resealed = box.seal(box.open(sealed));
        } catch (error) {
          if (error instanceof UnknownSealingKey) {
            report.unknownKeys[error.keyId] = (report.unknownKeys[error.keyId] ?? 0) + 1;
          } else {
            report.unreadable++;
          }
          continue;
        }
        if (await store.replace(ref, sealed, resealed)) report.resealed++;
        else report.changed++;
      }
      if (batch.length < batchSize) return report;
      after = batch[batch.length - 1].ref;
    }
  }

  private metUnknownKey(keyId: string): void {
    this.unknownKeys.set(keyId, (this.unknownKeys.get(keyId) ?? 0) + 1);
    this.logger.error(
      `A stored value is sealed with key ${keyId}, which this instance does not hold ` +
        `(WEBHOOK_SECRET_KEY has ${this.keyIds.join(', ')}): a key was retired before its values were ` +
        'resealed, or promoted before every instance accepted it (docs/webhooks.md#rotating-the-key)',
    );
  }

  private sealer(): SecretBox {
    if (!this.box) throw new Error('Sealing a secret needs WEBHOOK_SECRET_KEY');
    return this.box;
  }
}
