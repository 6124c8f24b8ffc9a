import { BadRequestException, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isInteger, parse } from 'lossless-json';
import { randomBytes } from 'node:crypto';
import { isUniqueViolation } from '../database';
import { AppConfig, WebhooksConfig } from '../config/configuration';
import { SecretsService } from '../secrets/secrets.service';
import {
  RefusedUrlError,
  UnresolvedHostError,
  parseWebhookUrl,
  resolveWebhookAddress,
} from './deliveries/address-policy';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { parseDateTime } from './dto/date-time';
import { EventDto, ListEventsQueryDto } from './dto/event.dto';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import {
  CreatedWebhookDto,
  RecoveryStartedDto,
  ResentDeliveryDto,
  RotatedWebhookDto,
  WebhookAttemptDto,
  WebhookDto,
  WebhookTestResultDto,
} from './dto/webhook.dto';
import { testEventBody } from './events/events';
import { newSigningSecret } from './subscriptions/signing-secret';
import { newSubscriptionId } from './subscriptions/subscription-id';
import { attemptLeaseMs, makeAttempt } from './deliveries/webhook-attempt';
import { eventWebhookId, parseWebhookId, webhookId } from './deliveries/webhook-id';
import {
  InvalidWebhookId,
  RecoverSinceOutOfRange,
  TooManySubscriptions,
  WebhookDeliveryNotFound,
  WebhookDisabled,
  WebhookHostUnresolved,
  WebhookNotFound,
  WebhookTestInProgress,
  WebhooksNotConfigured,
} from './webhooks.errors';
import {
  DEFAULT_SECRET_GRACE_SECONDS,
  EVENTS_DEFAULT_PAGE,
  EVENTS_MAX_PAGE,
  MAX_SUBSCRIPTIONS_PER_OWNER,
  RECENT_ATTEMPTS,
  RETENTION_MS,
} from './webhooks.limits';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { EventsRepository } from './events/events.repository';
import { SubscribedOwners } from './subscriptions/subscribed-owners';
import { SubscriptionRow, SubscriptionsRepository } from './subscriptions/subscriptions.repository';

/** A page of GET /events, and the cursor of the next one when more follow. */
export interface EventPage {
  events: EventDto[];
  limit: number;
  next?: string;
}

/** Integers as bigint, so a plant id above 2^53 is written back exactly. */
const exactNumber = (literal: string) => (isInteger(literal) ? BigInt(literal) : Number(literal));

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
    ...(row.previousSecretExpiresAt === null
      ? {}
      : { previousSecretExpiresAt: new Date(row.previousSecretExpiresAt).toISOString() }),
  };
}

@Injectable()
export class WebhooksService {
  private readonly config: WebhooksConfig;

  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    private readonly deliveriesRepository: DeliveriesRepository,
    private readonly eventsRepository: EventsRepository,
    private readonly secrets: SecretsService,
    private readonly owners: SubscribedOwners,
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
    const insert = () => this.subscriptions.insertSubscription(row, MAX_SUBSCRIPTIONS_PER_OWNER);
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
    // The 201 waits until every instance records this owner's changes with their events.
    await this.owners.subscribed(owner);
    return { ...toDto({ ...row, disabledAt: null, disabledReason: null, previousSecretExpiresAt: null }), secret };
  }

  async list(owner: string): Promise<WebhookDto[]> {
    this.requireKey();
    return (await this.subscriptions.listSubscriptions(owner)).map(toDto);
  }

  /**
   * By its id, or by the one it had before the API showed ids within 2^53 (see BY_PATH_ID in the
   * repository). Another user's subscription is as absent as a missing one.
   */
  async remove(owner: string, id: bigint): Promise<void> {
    this.requireKey();
    if (!(await this.subscriptions.deleteSubscription(owner, id))) throw new WebhookNotFound(id);
  }

  /**
   * Changes what the patch gives (its URL checked by checkUrl beforehand). `enabled: true`
   * re-enables a disabled subscription; `false` disables it, holding what it would receive.
   */
  async update(owner: string, id: bigint, dto: UpdateWebhookDto): Promise<WebhookDto> {
    this.requireKey();
    const row = await this.subscriptions.updateSubscription(owner, id, {
      url: dto.url,
      events: dto.events === undefined ? undefined : [...new Set(dto.events)],
      description: dto.description,
      enabled: dto.enabled,
    });
    if (row === undefined) throw new WebhookNotFound(id);
    return toDto(row);
  }

  /**
   * A new signing secret; the one it replaces keeps signing for `graceSeconds` beside it, so
   * receivers can take the new one up without rejecting a delivery.
   */
  async rotateSecret(
    owner: string,
    id: bigint,
    graceSeconds = DEFAULT_SECRET_GRACE_SECONDS,
  ): Promise<RotatedWebhookDto> {
    this.requireKey();
    const secret = newSigningSecret();
    const row = await this.subscriptions.rotateSecret(owner, id, this.secrets.seal(secret), graceSeconds * 1000);
    if (row === undefined) throw new WebhookNotFound(id);
    return { ...toDto(row), secret };
  }

  /**
   * Sends a `webhook.test` event to the subscription now, signed with its live secrets, through the
   * address policy and the sender a delivery goes through, and says how the endpoint took it.
   * Nothing is recorded: no event, no attempt, no change of the failure clock, and a disabled
   * subscription can be tested before it is re-enabled. One test of a subscription at a time, on
   * whichever instances they are asked: each holds a lease on the subscription's row for as long as
   * an attempt may take, which ends with it (or by itself, if this instance dies meanwhile).
   */
  async test(owner: string, id: bigint): Promise<WebhookTestResultDto> {
    this.requireKey();
    const target = await this.subscriptions.sendingTarget(owner, id);
    if (target === undefined) throw new WebhookNotFound(id);
    const lease = await this.subscriptions.takeTestLease(target.key, attemptLeaseMs(this.config));
    if (lease === undefined) throw new WebhookTestInProgress(id);
    try {
      const eventId = `test_${randomBytes(16).toString('hex')}`;
      const attemptedAt = new Date();
      const { result } = await makeAttempt(
        {
          url: target.url,
          sealedSecrets: target.sealedSecrets,
          webhookId: eventId,
          body: testEventBody(attemptedAt),
        },
        this.config,
        this.secrets,
      );
      return {
        eventId,
        delivered: result.status !== undefined && result.status >= 200 && result.status < 300,
        ...(result.status === undefined ? {} : { statusCode: result.status }),
        ...(result.error === undefined ? {} : { error: result.error.slice(0, 255) }),
        attemptedAt: attemptedAt.toISOString(),
        durationMs: Math.round(result.durationMs),
      };
    } finally {
      // The answer is had: a lease that cannot be ended now (the database away) ends by itself.
      await this.subscriptions.endTestLease(target.key, lease).catch(() => undefined);
    }
  }

  /** The delivery of one event to the subscription, due again now with the same `webhook-id`. */
  async resend(owner: string, id: bigint, eventId: string): Promise<ResentDeliveryDto> {
    this.requireKey();
    const ref = parseWebhookId(eventId);
    if (ref === undefined) throw new InvalidWebhookId();
    const subscription = await this.subscriptions.findSubscriptionState(owner, id);
    if (subscription === undefined) throw new WebhookNotFound(id);
    if (subscription.disabled) throw new WebhookDisabled(id);
    const resent = await this.deliveriesRepository.resend(subscription.key, ref);
    if (!resent.found) throw new WebhookDeliveryNotFound(id, eventId);
    return { eventId, type: resent.type! };
  }

  /**
   * Sends again, at the pace the subscription is delivered, every delivery of an event since
   * `since` that failed or was held while it was disabled (the dispatchers work through it).
   */
  async recover(owner: string, id: bigint, since: string): Promise<RecoveryStartedDto> {
    this.requireKey();
    const from = parseDateTime(since);
    if (from === undefined || from > Date.now() || from < Date.now() - RETENTION_MS) throw new RecoverSinceOutOfRange();
    const subscription = await this.subscriptions.findSubscriptionState(owner, id);
    if (subscription === undefined) throw new WebhookNotFound(id);
    if (subscription.disabled) throw new WebhookDisabled(id);
    await this.deliveriesRepository.startRecovery(subscription.key, from);
    return { since: new Date(from).toISOString() };
  }

  /** One page of the owner's events, with the cursor of the next when more follow. */
  async events(owner: string, query: ListEventsQueryDto): Promise<EventPage> {
    this.requireKey();
    const limit = Math.min(query.limit ?? EVENTS_DEFAULT_PAGE, EVENTS_MAX_PAGE);
    const order = query.order ?? 'desc';
    const rows = await this.eventsRepository.listEvents(owner, {
      limit,
      order,
      after: query.after === undefined ? undefined : BigInt(query.after.slice('evt_'.length)),
      types: query.type === undefined ? undefined : [query.type],
      since: parseDateTime(query.since),
      until: parseDateTime(query.until),
    });
    const page = rows.slice(0, limit);
    const events = page.map((row) => ({
      id: eventWebhookId(row.id),
      type: row.type,
      timestamp: new Date(row.occurredAt).toISOString(),
      data: parse(row.data, null, exactNumber) as object,
    }));
    return { events, limit, next: rows.length > limit ? events[events.length - 1].id : undefined };
  }

  async deliveries(owner: string, id: bigint): Promise<WebhookAttemptDto[]> {
    this.requireKey();
    const key = await this.subscriptions.findSubscription(owner, id);
    if (key === undefined) throw new WebhookNotFound(id);
    return (await this.deliveriesRepository.recentAttempts(key, RECENT_ATTEMPTS)).map((attempt) => ({
      eventId: webhookId({ id: attempt.deliveryId, eventId: attempt.eventId }),
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
