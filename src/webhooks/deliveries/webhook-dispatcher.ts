import { Injectable, Logger, BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomUUID } from 'node:crypto';
import { AppConfig, WebhooksConfig } from '../../config/configuration';
import { RETRY_JITTER } from '../../config/env/webhooks';
import { ShutdownState } from '../../lifecycle/shutdown-state';
import { SecretsService } from '../../secrets/secrets.service';
import { deliveryBody } from '../events/events';
import { attemptLeaseMs, makeAttempt } from './webhook-attempt';
import { webhookId } from './webhook-id';
import { AttemptResult, closeIdleConnections } from './webhook-sender';
import { WebhookDeliveryMetrics } from '../webhooks.metrics';
import { EventsRepository } from '../events/events.repository';
import { AttemptOutcome, ClaimRoom, ClaimedDelivery, FinishedAttempt } from './claims';
import { DeliveriesRepository } from './deliveries.repository';
import { PRUNE_EVERY_MS, RECOVERIES_PER_POLL, RETENTION_MS } from '../webhooks.limits';

/** The wait before the next attempt: the schedule's step, give or take RETRY_JITTER of it. */
export function retryDelayMs(
  schedule: readonly number[],
  attemptsMade: number,
  random = Math.random,
): number | undefined {
  const step = schedule[attemptsMade - 1];
  return step === undefined ? undefined : step * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random());
}

/** What an attempt's result means for the delivery. */
export function outcomeOf(
  result: AttemptResult,
  attemptsMade: number,
  schedule: readonly number[],
): Exclude<AttemptOutcome, { kind: 'hold' }> {
  if (result.status !== undefined && result.status >= 200 && result.status < 300) return { kind: 'delivered' };
  if (result.status === 410) return { kind: 'disable', reason: 'the endpoint answered 410 Gone' };
  const delayMs = retryDelayMs(schedule, attemptsMade);
  return delayMs === undefined ? { kind: 'failed' } : { kind: 'retry', delayMs };
}

type Result = 'delivered' | 'retry' | 'failed' | 'gone' | 'refused';

/**
 * Delivers the events recorded with the plant changes (EventOutbox). Every instance runs one (API
 * instances unless WEBHOOK_DELIVERY=false, and `plantstore worker` processes): it claims due deliveries for a
 * lease (the attempt timeout and a margin), sends each to the address it checked, and records the
 * outcome. A delivery whose lease ends without an outcome (the instance died) is due again, for any
 * instance: at least once, with duplicates possible, which receivers drop by `webhook-id`.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly config: WebhooksConfig;
  private readonly shutdownTimeoutMs: number;
  private readonly production: boolean;
  private readonly leaseMs: number;
  /** This instance's claims; a fresh one per start, so a restarted instance never finishes an old lease. */
  private readonly claim = randomUUID();
  /**
   * Attempts in flight on this instance, each its own entry: a delivery claimed again while an
   * attempt of it still runs (its lease ended first) is two attempts, and both count.
   */
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight on this instance per subscription and per owner, which the claim keeps within their caps. */
  private readonly perSubscription = new Map<bigint, number>();
  private readonly perOwner = new Map<string, number>();
  private readonly room: ClaimRoom;
  /** Finished attempts waiting to be recorded, with who waits for each. */
  private unrecorded: {
    finished: FinishedAttempt;
    recorded: (disabled: boolean) => void;
    failed: (error: unknown) => void;
  }[] = [];
  private recording?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private stopped = true;
  private lastPrune = 0;
  private lastRecovery = 0;

  constructor(
    config: ConfigService<AppConfig, true>,
    private readonly repository: DeliveriesRepository,
    private readonly events: EventsRepository,
    private readonly shutdown: ShutdownState,
    private readonly metrics: WebhookDeliveryMetrics,
    private readonly secrets: SecretsService,
  ) {
    this.config = config.get('webhooks', { infer: true });
    this.shutdownTimeoutMs = config.get('shutdown.timeoutMs', { infer: true });
    this.production = config.get('env', { infer: true }) === 'production';
    this.leaseMs = attemptLeaseMs(this.config);
    const subscriptionCap = Math.min(this.config.subscriptionConcurrency, this.config.concurrency);
    const ownerCap = Math.min(this.config.ownerConcurrency, this.config.concurrency);
    this.room = {
      subscription: (id) => subscriptionCap - (this.perSubscription.get(id) ?? 0),
      owner: (owner) => ownerCap - (this.perOwner.get(owner) ?? 0),
    };
  }

  /** Whether webhooks can be used: a key to seal their secrets is configured. */
  get enabled(): boolean {
    return this.secrets.configured;
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    if (!this.config.deliver) {
      this.logger.log('WEBHOOK_DELIVERY=false: this instance records events and leaves their delivery to workers');
      return;
    }
    if (this.production && (this.config.allowHttp || this.config.allowPrivate)) {
      this.logger.warn(
        'WEBHOOK_ALLOW_HTTP or WEBHOOK_ALLOW_PRIVATE is set in production: webhooks may be sent unencrypted or to internal addresses',
      );
    }
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops claiming and lets attempts in flight finish, before the database closes, within the
   * SHUTDOWN_TIMEOUT_MS that began with the shutdown (they ran while requests drained); an attempt
   * cut short is due again for any instance once its lease ends.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
    const deadline = (this.shutdown.beganAt ?? Date.now()) + this.shutdownTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(this.inFlight.values()),
      new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    if (this.inFlight.size > 0) {
      this.logger.warn(`${this.inFlight.size} webhook attempts still running at shutdown; their leases will expire`);
    }
    closeIdleConnections();
  }

  /**
   * Records a finished attempt, together with those that finished while the previous batch was
   * being recorded: one transaction per batch, not per attempt (see recordAttempts). Resolves to
   * whether its subscription was disabled by it.
   */
  private record(finished: FinishedAttempt): Promise<boolean> {
    return new Promise((recorded, failed) => {
      this.unrecorded.push({ finished, recorded, failed });
      this.recording ??= this.recordWaiting().finally(() => (this.recording = undefined));
    });
  }

  private async recordWaiting(): Promise<void> {
    while (this.unrecorded.length > 0) {
      const batch = this.unrecorded;
      this.unrecorded = [];
      try {
        const disabled = await this.repository.recordAttempts(
          this.claim,
          batch.map((waiting) => waiting.finished),
          this.config.disableAfterMs,
        );
        this.metrics.disabledSubscriptions.inc(disabled.size);
        for (const { finished, recorded } of batch) recorded(disabled.has(finished.delivery.subscriptionId));
      } catch (error) {
        for (const { failed } of batch) failed(error);
      }
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.polling = this.poll().finally(() => (this.polling = undefined));
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    let more = false;
    try {
      const free = this.config.concurrency - this.inFlight.size;
      if (free > 0 && !this.shutdown.isShuttingDown) {
        const claimed = await this.repository.claimDue(free, this.leaseMs, this.claim, this.room);
        more = claimed.more || claimed.deliveries.length === free;
        for (const delivery of claimed.deliveries) this.start(delivery);
      }
      // Recoveries advance once a poll interval, a batch each, paced by what their subscriptions still have pending.
      if (Date.now() - this.lastRecovery >= this.config.pollIntervalMs && !this.shutdown.isShuttingDown) {
        this.lastRecovery = Date.now();
        if ((await this.repository.recoverNext(RECOVERIES_PER_POLL)) > 0) more = true;
      }
      if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
        this.lastPrune = Date.now();
        await this.events.prune(RETENTION_MS);
        await this.repository.prune(RETENTION_MS);
      }
    } catch (error) {
      // Another node's claim of the same rows won certification, or the database is away: the
      // next poll tries again; nothing was claimed by this one.
      this.logger.warn(`Looking for due webhook deliveries failed: ${describe(error)}`);
    }
    if (!this.shutdown.isShuttingDown) this.schedule(more ? 0 : this.config.pollIntervalMs);
  }

  private start(delivery: ClaimedDelivery): void {
    this.metrics.attemptsInFlight.inc();
    count(this.perSubscription, delivery.subscriptionId, 1);
    count(this.perOwner, delivery.owner, 1);
    const attempt: Promise<void> = this.attempt(delivery)
      .catch((error) =>
        this.logger.error(`Webhook delivery ${webhookId(delivery)} failed to record: ${describe(error)}`),
      )
      .finally(() => {
        this.inFlight.delete(attempt);
        count(this.perSubscription, delivery.subscriptionId, -1);
        count(this.perOwner, delivery.owner, -1);
        this.metrics.attemptsInFlight.dec();
        // A slot is free: look again soon rather than a whole interval later.
        if (!this.stopped && !this.shutdown.isShuttingDown && this.polling === undefined) this.schedule(0);
      });
    this.inFlight.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const id = webhookId(delivery);
    if (delivery.disabled) {
      // Its subscription was disabled after it was recorded: held without an attempt, for a recovery.
      await this.record({
        delivery,
        attempt: { statusCode: null, error: null, durationMs: 0, startedAt: performance.now() },
        outcome: { kind: 'hold' },
      });
      this.logger.warn({
        webhookId: id,
        subscriptionId: String(delivery.subscriptionId),
        event: delivery.type,
        result: 'held',
        msg: `Webhook ${id} held: its subscription is disabled`,
      });
      return;
    }
    const startedAt = performance.now();
    const { result, refused, failure } = await makeAttempt(
      {
        url: delivery.url,
        sealedSecrets: [
          delivery.sealedSecret,
          ...(delivery.previousSealedSecret === null ? [] : [delivery.previousSealedSecret]),
        ],
        webhookId: id,
        body: deliveryBody(delivery.type, delivery.occurredAt, delivery.data),
      },
      this.config,
      this.secrets,
    );
    if (failure !== undefined) this.logger.error(`Webhook ${id} could not be sent: ${describe(failure)}`);
    const attemptsMade = delivery.attempts + 1;
    // A resent or recovered delivery's schedule starts again: the waits count its attempts since then.
    const outcome = outcomeOf(result, attemptsMade - delivery.retryFrom, this.config.retryScheduleMs);
    const disabled = await this.record({
      delivery,
      attempt: {
        statusCode: result.status ?? null,
        error: result.error?.slice(0, 255) ?? null,
        durationMs: result.durationMs,
        startedAt,
      },
      outcome,
    });
    const label: Result = refused ? 'refused' : outcome.kind === 'disable' ? 'gone' : outcome.kind;
    this.metrics.deliveries.inc({ event: delivery.type, result: label });
    this.metrics.duration.observe({ event: delivery.type }, result.durationMs / 1000);
    const fields = {
      webhookId: id,
      subscriptionId: String(delivery.subscriptionId),
      event: delivery.type,
      attempt: attemptsMade,
      status: result.status,
      error: result.error,
      durationMs: Math.round(result.durationMs),
      result: label,
      retryInMs: outcome.kind === 'retry' ? Math.round(outcome.delayMs) : undefined,
      subscriptionDisabled: disabled || undefined,
    };
    const message = `Webhook ${id} attempt ${attemptsMade}: ${result.status ?? result.error} (${label})`;
    if (label === 'delivered') this.logger.log({ ...fields, msg: message });
    else this.logger.warn({ ...fields, msg: message });
  }
}

function count<K>(counts: Map<K, number>, key: K, by: number): void {
  const value = (counts.get(key) ?? 0) + by;
  if (value === 0) counts.delete(key);
  else counts.set(key, value);
}

function describe(error: unknown): string {
  if (error instanceof Error) return (error as { code?: string }).code ?? error.message;
  return String(error);
}
