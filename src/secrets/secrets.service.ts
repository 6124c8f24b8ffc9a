import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { SecretBox } from './secret-box';

/**
 * Seals and opens stored secrets under the operator's WEBHOOK_SECRET_KEY, for every part of the
 * service that keeps one. Without a key nothing can be sealed; each user decides what that means
 * for it (webhooks are off, a sealed answer cannot be stored).
 */
@Injectable()
export class SecretsService {
  private readonly box?: SecretBox;

  constructor(config: ConfigService<AppConfig, true>) {
    const { keys } = config.get('secrets', { infer: true });
    if (keys.length > 0) this.box = new SecretBox(keys);
  }

  /** Whether a key is configured. */
  get configured(): boolean {
    return this.box !== undefined;
  }

  seal(plain: string): string {
    return this.sealer().seal(plain);
  }

  /** Throws when the text was not sealed by one of the keys or was altered. */
  open(sealed: string): string {
    return this.sealer().open(sealed);
  }

  private sealer(): SecretBox {
    if (!this.box) throw new Error('Sealing a secret needs WEBHOOK_SECRET_KEY');
    return this.box;
  }
}
