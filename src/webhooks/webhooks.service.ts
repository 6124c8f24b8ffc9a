import {
  ConflictException,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
  BadRequestException,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { isUniqueViolation } from '../database';
import { AppConfig, WebhooksConfig } from '../config/configuration';
import { RefusedUrlError, parseWebhookUrl, resolveWebhookAddress } from './address-policy';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { CreatedWebhookDto, WebhookAttemptDto, WebhookDto } from './dto/webhook.dto';
import { SecretBox, newSigningSecret } from './secret-box';
import { webhookId } from './webhook-dispatcher';
import { SubscriptionRow, WebhooksRepository } from './webhooks.repository';

/** Each event of a plant change is recorded once per subscription: the bound keeps that fan-out small. */
export const MAX_SUBSCRIPTIONS_PER_OWNER = 10;
/** Attempts shown by GET /webhooks/{id}/deliveries, newest first. */
export const RECENT_ATTEMPTS = 100;

/** A random positive int64: ids need no round trip to be known, and do not tell how many exist. */
function newId(): bigint {
  const id = randomBytes(8).readBigUInt64BE() & (2n ** 63n - 1n);
  return id === 0n ? 1n : id;
}

function toDto(row: SubscriptionRow): WebhookDto {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    ...(row.description === null ? {} : { description: row.description }),
    createdAt: new Date(row.createdAt).toISOString(),
    enabled: row.disabledAt === null,
    ...(row.disabledAt === null
      ? {}
      : { disabledAt: new Date(row.disabledAt).toISOString(), disabledReason: row.disabledReason ?? undefined }),
  };
}

@Injectable()
export class WebhooksService {
  private readonly config: WebhooksConfig;
  private readonly box?: SecretBox;

  constructor(
    private readonly repository: WebhooksRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.config = config.get('webhooks', { infer: true });
    if (this.config.secretKeys.length > 0) this.box = new SecretBox(this.config.secretKeys);
  }

  /**
   * The URL is checked as it will be at every attempt (scheme, and where its host resolves), so a
   * subscription that could never be delivered, or would reach an internal address, is refused now.
   */
  async create(owner: string, dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    const box = this.sealer();
    const policy = { allowHttp: this.config.allowHttp, allowPrivate: this.config.allowPrivate };
    try {
      await resolveWebhookAddress(parseWebhookUrl(dto.url, policy), policy, undefined, this.config.timeoutMs);
    } catch (error) {
      if (error instanceof RefusedUrlError) throw new BadRequestException(error.message);
      throw error;
    }
    const secret = newSigningSecret();
    const events = [...new Set(dto.events)];
    const row = {
      id: newId(),
      owner,
      url: dto.url,
      events,
      description: dto.description ?? null,
      sealedSecret: box.seal(secret),
      createdAt: Date.now(),
    };
    const insert = () => this.repository.insertSubscription(row, MAX_SUBSCRIPTIONS_PER_OWNER);
    let inserted: boolean;
    try {
      inserted = await insert();
    } catch (error) {
      // One chance in 2^63 per existing subscription; a new id settles it.
      if (!isUniqueViolation(error)) throw error;
      row.id = newId();
      inserted = await insert();
    }
    if (!inserted) {
      throw new ConflictException(
        `At most ${MAX_SUBSCRIPTIONS_PER_OWNER} webhook subscriptions per user; delete one before adding another`,
      );
    }
    return { ...toDto({ ...row, disabledAt: null, disabledReason: null }), secret };
  }

  async list(owner: string): Promise<WebhookDto[]> {
    this.sealer();
    return (await this.repository.listSubscriptions(owner)).map(toDto);
  }

  /** Another user's subscription is as absent as a missing one. */
  async remove(owner: string, id: bigint): Promise<void> {
    this.sealer();
    if (!(await this.repository.deleteSubscription(owner, id))) throw this.notFound(id);
  }

  async deliveries(owner: string, id: bigint): Promise<WebhookAttemptDto[]> {
    this.sealer();
    if (!(await this.repository.subscriptionExists(owner, id))) throw this.notFound(id);
    return (await this.repository.recentAttempts(id, RECENT_ATTEMPTS)).map((attempt) => ({
      eventId: webhookId(attempt.deliveryId),
      type: attempt.type,
      attempt: attempt.attempt,
      ...(attempt.statusCode === null ? {} : { statusCode: attempt.statusCode }),
      ...(attempt.error === null ? {} : { error: attempt.error }),
      attemptedAt: new Date(attempt.attemptedAt).toISOString(),
      durationMs: attempt.durationMs,
    }));
  }

  private notFound(id: bigint): NotFoundException {
    return new NotFoundException(`Webhook subscription ${id} not found`);
  }

  private sealer(): SecretBox {
    if (!this.box) {
      throw new ServiceUnavailableException(
        'Webhooks are not configured on this server: its operator must set WEBHOOK_SECRET_KEY',
      );
    }
    return this.box;
  }
}
