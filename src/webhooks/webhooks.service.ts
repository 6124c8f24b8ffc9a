import { BadRequestException, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isUniqueViolation } from '../database';
import { AppConfig, WebhooksConfig } from '../config/configuration';
import { SecretsService } from '../secrets/secrets.service';
import { RefusedUrlError, UnresolvedHostError, parseWebhookUrl, resolveWebhookAddress } from './address-policy';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { CreatedWebhookDto, WebhookAttemptDto, WebhookDto } from './dto/webhook.dto';
import { newSigningSecret } from './signing-secret';
import { newSubscriptionId } from './subscription-id';
import { webhookId } from './webhook-dispatcher';
import { TooManySubscriptions, WebhookHostUnresolved, WebhookNotFound, WebhooksNotConfigured } from './webhooks.errors';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from './webhooks.limits';
import { SubscriptionRow, WebhooksRepository } from './webhooks.repository';
import { RECENT_ATTEMPTS } from './webhooks.limits';

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

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly secrets: SecretsService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.config = config.get('webhooks', { infer: true });
  }

  /** A new subscription: its URL checked, then stored. */
  async create(owner: string, dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    await this.checkUrl(dto.url);
    return this.subscribe(owner, dto);
  }

  /**
   * The URL is checked as it will be at every attempt (scheme, and where its host resolves), so a
   * subscription that could never be delivered, or would reach an internal address, is refused now.
   * It waits on DNS for up to WEBHOOK_TIMEOUT_MS: callers run it before any transaction.
   */
  async checkUrl(url: string): Promise<void> {
    this.requireKey();
    const policy = { allowHttp: this.config.allowHttp, allowPrivate: this.config.allowPrivate };
    try {
      await resolveWebhookAddress(parseWebhookUrl(url, policy), policy, undefined, this.config.timeoutMs);
    } catch (error) {
      if (error instanceof UnresolvedHostError) throw new WebhookHostUnresolved(error);
      if (error instanceof RefusedUrlError) throw new BadRequestException(error.message);
      throw error;
    }
  }

  /** Stores a subscription whose URL checkUrl accepted, with a new id and signing secret. */
  async subscribe(owner: string, dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    this.requireKey();
    const secret = newSigningSecret();
    const events = [...new Set(dto.events)];
    const row = {
      id: newSubscriptionId(),
      owner,
      url: dto.url,
      events,
      description: dto.description ?? null,
      sealedSecret: this.secrets.seal(secret),
      createdAt: Date.now(),
    };
    const insert = () => this.repository.insertSubscription(row, MAX_SUBSCRIPTIONS_PER_OWNER);
    let inserted: boolean;
    try {
      inserted = await insert();
    } catch (error) {
      // One chance in 2^53 per existing subscription; a new id settles it.
      if (!isUniqueViolation(error)) throw error;
      row.id = newSubscriptionId();
      inserted = await insert();
    }
    if (!inserted) {
      throw new TooManySubscriptions();
    }
    return { ...toDto({ ...row, disabledAt: null, disabledReason: null }), secret };
  }

  async list(owner: string): Promise<WebhookDto[]> {
    this.requireKey();
    return (await this.repository.listSubscriptions(owner)).map(toDto);
  }

  /**
   * By its id, or by the one it had before the API showed ids within 2^53 (see BY_PATH_ID in the
   * repository). Another user's subscription is as absent as a missing one.
   */
  async remove(owner: string, id: bigint): Promise<void> {
    this.requireKey();
    if (!(await this.repository.deleteSubscription(owner, id))) throw new WebhookNotFound(id);
  }

  async deliveries(owner: string, id: bigint): Promise<WebhookAttemptDto[]> {
    this.requireKey();
    const key = await this.repository.findSubscription(owner, id);
    if (key === undefined) throw new WebhookNotFound(id);
    return (await this.repository.recentAttempts(key, RECENT_ATTEMPTS)).map((attempt) => ({
      eventId: webhookId(attempt.deliveryId),
      type: attempt.type,
      attempt: attempt.attempt,
      ...(attempt.statusCode === null ? {} : { statusCode: attempt.statusCode }),
      ...(attempt.error === null ? {} : { error: attempt.error }),
      attemptedAt: new Date(attempt.attemptedAt).toISOString(),
      durationMs: attempt.durationMs,
    }));
  }

  /** Without a key to seal their secrets, webhooks are off: every route answers 503. */
  private requireKey(): void {
    if (!this.secrets.configured) {
      throw new WebhooksNotConfigured();
    }
  }
}
