import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isInteger, parse } from 'lossless-json';
import { randomUUID } from 'node:crypto';
import { toExactJson } from '../common/json/exact-json';
import { httpExceptionMessage } from '../common/filters/all-exceptions.filter';
import { AppConfig } from '../config/configuration';
import { Database, READ_COMMITTED, WRITE } from '../database';
import { UnknownSealingKey } from '../secrets/secret-box';
import { SecretsService } from '../secrets/secrets.service';
import { isFinalRefusal } from './final-answer';
import { IdempotencyKeyInFlight, IdempotencyKeyReused, IdempotentAnswerUnavailable } from './idempotency.errors';
import { IdempotencyRepository, KeyRef } from './idempotency.repository';
import { SEALED_ANSWER } from './sealed-answers';
import { IN_FLIGHT_LEASE_MS, PURGE_BATCH, PURGE_INTERVAL_MS, PURGE_MAX_BATCHES } from './idempotency.limits';

export interface IdempotentRoute {
  /** The status of a success on this route (its @HttpCode). */
  successStatus: number;
  /** Seal a successful answer before storing it: it holds a secret. */
  sealSuccess: boolean;
}

/** A key this request holds while it runs. */
export interface HeldKey {
  ref: KeyRef;
  claim: string;
  route: IdempotentRoute;
}

export type Begun = { kind: 'replay'; statusCode: number; body: string } | { kind: 'proceed'; held: HeldKey };

/** Parses a stored answer keeping its integers exact, so it is written back digit for digit. */
export function parseStoredBody(text: string): unknown {
  return parse(text, undefined, (n: string) => (isInteger(n) ? BigInt(n) : Number(n)));
}

/**
 * The rules of the Idempotency-Key field (draft-ietf-httpapi-idempotency-key-header): one request
 * per owner and key is processed; its final answer, success or a refusal the same request would
 * get again (isFinalRefusal), is stored for IDEMPOTENCY_TTL and given again to a repeat of the same
 * request; anything else frees the key so the retry runs afresh.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);
  private readonly ttlMs: number;
  private nextPurgeAt?: number;
  private purging = false;

  constructor(
    private readonly repository: IdempotencyRepository,
    private readonly secrets: SecretsService,
    private readonly database: Database,
    config: ConfigService<AppConfig, true>,
  ) {
    this.ttlMs = config.get('idempotency', { infer: true }).ttlMs;
  }

  /**
   * Takes the key for this request, or settles it from what is stored: the stored answer, 422 for a
   * different request under the same key, 409 while the first is still running. A key whose holder
   * died (lease out) or whose answer expired is taken over. A couple of rounds cover a row deleted
   * or taken between two of the statements.
   */
  async begin(ref: KeyRef, fingerprint: string, route: IdempotentRoute): Promise<Begun> {
    this.purgeWhenDue();
    const claim = randomUUID();
    for (let round = 0; round < 3; round++) {
      if (await this.repository.insert(ref, fingerprint, claim, IN_FLIGHT_LEASE_MS, this.ttlMs)) {
        return { kind: 'proceed', held: { ref, claim, route } };
      }
      const row = await this.repository.find(ref);
      if (row === undefined) continue;
      if (!row.expired) {
        if (row.fingerprint !== fingerprint) throw new IdempotencyKeyReused();
        if (row.statusCode !== null) {
          return { kind: 'replay', statusCode: row.statusCode, body: this.open(row.response ?? '') };
        }
        if (!row.leaseExpired) throw new IdempotencyKeyInFlight();
      }
      if (await this.repository.takeOver(ref, fingerprint, claim, IN_FLIGHT_LEASE_MS, this.ttlMs)) {
        return { kind: 'proceed', held: { ref, claim, route } };
      }
    }
    throw new IdempotencyKeyInFlight();
  }

  /**
   * Runs the request's work and stores its answer in one transaction: whatever the work writes (the
   * plant, the subscription) and the answer commit together or not at all, and all of it runs again
   * after a deadlock or a lost certification. It fails when the key was taken over meanwhile (this
   * request's lease ran out), so only one request's writes land. At READ COMMITTED, the level of
   * every transaction that may hold a plant change (EventOutbox), which the work joins.
   */
  succeed<T>(held: HeldKey, work: () => Promise<T>): Promise<T> {
    return this.database.transaction(
      async () => {
        const answer = await work();
        if (!(await this.repository.complete(held.ref, held.claim, this.successAnswer(held, answer), this.ttlMs))) {
          throw new IdempotencyKeyInFlight();
        }
        return answer;
      },
      { retry: WRITE, isolation: READ_COMMITTED },
    );
  }

  /**
   * A final refusal (isFinalRefusal) is stored as the `{error, message}` the filter writes; anything
   * else (a momentary refusal, 5xx, the database unavailable) frees the key. A failure to free it
   * leaves it to its lease.
   */
  async failed(held: HeldKey, error: unknown): Promise<void> {
    try {
      if (isFinalRefusal(error)) {
        const status = error.getStatus();
        const response = toExactJson({ error: status, message: httpExceptionMessage(error) })!;
        await this.repository.complete(held.ref, held.claim, { statusCode: status, response }, this.ttlMs);
      } else {
        await this.repository.release(held.ref, held.claim);
      }
    } catch (storeError) {
      this.logger.warn(`Could not settle the key of a failed idempotent request: ${(storeError as Error).message}`);
    }
  }

  private successAnswer(held: HeldKey, body: unknown): { statusCode: number; response: string } {
    const text = toExactJson(body) ?? '';
    if (!held.route.sealSuccess) return { statusCode: held.route.successStatus, response: text };
    return { statusCode: held.route.successStatus, response: SEALED_ANSWER + this.secrets.seal(text) };
  }

  /** A stored answer sealed under a key no longer held is not a server failure: the client is told it is gone. */
  private open(stored: string): string {
    if (!stored.startsWith(SEALED_ANSWER)) return stored;
    try {
      return this.secrets.open(stored.slice(SEALED_ANSWER.length));
    } catch (error) {
      if (error instanceof UnknownSealingKey) throw new IdempotentAnswerUnavailable();
      throw error;
    }
  }

  /**
   * Expired keys are deleted by whichever instance serves keyed requests, once a PURGE_INTERVAL_MS,
   * in the background and in bounded batches, so no request waits for it and no statement holds
   * locks long. The first keyed request of an instance only starts the clock.
   */
  private purgeWhenDue(): void {
    const now = Date.now();
    if (this.nextPurgeAt === undefined) this.nextPurgeAt = now + PURGE_INTERVAL_MS;
    if (now < this.nextPurgeAt || this.purging) return;
    this.nextPurgeAt = now + PURGE_INTERVAL_MS;
    this.purging = true;
    void this.purge().finally(() => (this.purging = false));
  }

  /** Deletes expired keys, up to PURGE_MAX_BATCHES batches; how many went. */
  async purge(): Promise<number> {
    let total = 0;
    try {
      for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
        const deleted = await this.repository.purgeExpired(PURGE_BATCH);
        total += deleted;
        if (deleted < PURGE_BATCH) break;
      }
    } catch (error) {
      this.logger.warn(`Could not delete expired idempotency keys: ${(error as Error).message}`);
    }
    return total;
  }
}
