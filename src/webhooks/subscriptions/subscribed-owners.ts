import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Database } from '../../database';
import { SubscriptionsRepository } from './subscriptions.repository';

/** How often an instance reads the subscription feed. */
export const FEED_POLL_MS = 100;
/**
 * How long what an instance read of the feed stays its knowledge: after that without a newer read,
 * it knows nothing and every change takes the guarded statement. `POST /webhooks` answers this long
 * after its commit, so every instance that is sure then has read the new subscription.
 */
export const FEED_KNOWN_FOR_MS = 500;
/**
 * The most owners with a subscription an instance holds, and subscriptions it reads at once: a bound
 * on its memory (about 100 bytes an owner) and on a read's size. Past it the instance stops reading the feed and takes the guarded statement for every
 * change, as it does when unsure.
 */
export const FEED_MAX_OWNERS = 100_000;
/**
 * How often an instance reads every subscription again, in place of the poll's read of what is new,
 * and keeps only the owners it found: the feed tells of new subscriptions only, so this is how an
 * owner whose subscriptions are all deleted gets the plain statement again.
 */
export const FEED_REREAD_MS = 60_000;

/**
 * Which owners have a webhook subscription, as this instance knows it from the subscription feed:
 * every new subscription raises the feed's version in its own transaction and carries it
 * (SubscriptionsRepository.insertSubscription), and every FEED_POLL_MS the instance reads the
 * subscriptions made after the highest version it has read, in one statement through an index.
 * Versions commit in order, so a read that saw version v saw everything before it.
 *
 * What a read returned is known for FEED_KNOWN_FOR_MS from the moment the read was sent; the
 * subscription's 201 is held as long after its commit (`subscribed`). So a change asked
 * for after that 201, on whichever instance, is decided either with a read sent after the
 * subscription committed, which found it, or with no knowledge at all. Only an owner known to have
 * no subscription gets the plain statement (`knownWithout`); an unsure instance, or an owner with a
 * subscription, takes the guarded one (EventOutbox).
 *
 * Owners whose subscriptions are gone stay in the set until the next read of every subscription,
 * every FEED_REREAD_MS: it sees what had committed when it ran, so the owners it found, and the
 * subscriptions committed after it (which carry higher versions, read by the polls after it), are
 * the whole set. Until then a gone subscriber's changes take the guarded statement, which costs a
 * read, never an event.
 */
@Injectable()
export class SubscribedOwners implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly owners = new Set<string>();
  /** The highest feed version read; -1 before the first read, which reads every subscription. */
  private version = -1n;
  /** performance.now() until which the set is known complete. */
  private knownUntil = 0;
  /** performance.now() when the last read of every subscription was sent. */
  private readAllSent = 0;
  /**
   * Owners announced here (`subscribed`) while a read of every subscription is under way: its
   * answer may predate their subscription, and must not take them out of the set.
   */
  private announcedDuringReadAll?: Set<string>;
  private polling?: Promise<void>;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly database: Database,
    private readonly repository: SubscriptionsRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.polling = this.poll();
  }

  /** Before the data source closes (the HTTP server has drained by then), so no read fails on it. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.polling;
  }

  /** Whether `owner` is known, now, to have no subscription: its change needs no event. */
  knownWithout(owner: string): boolean {
    return performance.now() < this.knownUntil && !this.owners.has(owner);
  }

  /**
   * For a subscription of `owner` just made in the current transaction (or statement): known here at
   * once, and resolves once every instance sure of its knowledge has read it, FEED_KNOWN_FOR_MS after
   * the commit (Database.afterCommit: for a subscription made in an idempotent request's transaction,
   * after that one commits). The time is taken after the commit returned, on this instance's clock;
   * `setTimeout` may fire a little early, so it is checked.
   */
  async subscribed(owner: string): Promise<void> {
    this.owners.add(owner);
    this.announcedDuringReadAll?.add(owner);
    await this.database.afterCommit(async () => {
      const until = performance.now() + FEED_KNOWN_FOR_MS;
      for (let left = FEED_KNOWN_FOR_MS; left > 0; left = until - performance.now()) await sleep(Math.ceil(left));
    });
  }

  /** One read of the feed, then the next FEED_POLL_MS after this one was sent, until shutdown. */
  private async poll(): Promise<void> {
    while (!this.stopped) {
      const sent = performance.now();
      if (!(await this.read(sent))) return;
      const wait = sent + FEED_POLL_MS - performance.now();
      if (wait > 0) await sleep(wait, undefined, { ref: false });
    }
  }

  /**
   * Reads what is new, or every subscription (the first read, then every FEED_REREAD_MS); false once
   * there is too much to hold, and the instance stops reading.
   */
  private async read(sent: number): Promise<boolean> {
    const all = this.version < 0n || sent - this.readAllSent >= FEED_REREAD_MS;
    const announced = all ? new Set<string>() : undefined;
    this.announcedDuringReadAll = announced;
    let page;
    try {
      page = await this.repository.ownersSince(all ? -1n : this.version, FEED_MAX_OWNERS + 1);
    } catch (error) {
      // The knowledge runs out on its own; changes meanwhile take the guarded statement.
      if (!this.failing) this.logger.warn(`Could not read the subscription feed: ${(error as Error).message}`);
      this.failing = true;
      return true;
    } finally {
      this.announcedDuringReadAll = undefined;
    }
    this.failing = false;
    if (announced) {
      this.owners.clear();
      for (const owner of announced) this.owners.add(owner);
      this.readAllSent = sent;
    }
    for (const owner of page.owners) this.owners.add(owner);
    if (page.full || this.owners.size > FEED_MAX_OWNERS) {
      this.knownUntil = 0;
      this.owners.clear();
      this.logger.warn(
        `More than ${FEED_MAX_OWNERS} owners with webhook subscriptions: this instance records every plant change with the guarded statement`,
      );
      return false;
    }
    // A read of every subscription may not see the highest version read before (its subscription
    // deleted since); what committed after it is higher than both.
    if (page.version > this.version) this.version = page.version;
    this.knownUntil = sent + FEED_KNOWN_FOR_MS;
    return true;
  }
}
