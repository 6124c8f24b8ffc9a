import { Injectable } from '@nestjs/common';
import { Condition, Database, READ_COMMITTED, WRITE } from '../../database';
import { SubscribedOwners } from '../subscriptions/subscribed-owners';
import { PlantChange, PlantChanges, eventTypesOn, eventsOf } from './events';
import { EventsRepository } from './events.repository';

/** Owners remembered as having a subscription, and for how long: a bound on memory, not a correctness rule. */
const WATCHED_OWNERS = 10_000;
const WATCHED_FOR_MS = 60_000;

/** Thrown inside the transaction to roll back events recorded for a change that changed nothing. */
class NothingChanged extends Error {}

/**
 * Records the webhook events of a plant change in the change's own transaction (a transactional
 * outbox): the event once and a delivery row for every subscription of the owner that wants it (held
 * for a disabled one), committed with the change or not at all, whichever instance made it. The
 * dispatchers deliver the rows.
 *
 * Most owners subscribe to nothing, and their changes must cost what they would without webhooks:
 * for an owner this instance knows to have no subscription (SubscribedOwners, which every
 * instance keeps from the subscription feed, its knowledge bounded in age) the change is the plain
 * statement. When the instance is unsure, or knows of a subscription, the statement carries the
 * condition that no subscription wants its events (evaluated by the database in the same statement,
 * so a subscription committed by another instance a moment before is seen). When that statement
 * changed nothing, one read tells a missing row from a subscription. Only for a subscription, or an owner known to have one, does the
 * change run as a transaction: its events recorded first, the subscriptions read without locks
 * (READ COMMITTED: an INSERT ... SELECT then takes no lock on the rows it reads, so while the
 * plant's statement waits for causality on a Galera node, the transaction holds only the delivery
 * rows it has just inserted), the plant changed last. On a Galera node every statement first waits
 * for causality, and one waiting while its transaction holds a row lock an applier needs would wait
 * for that applier as it waits for it (docs/scaling.md). Inside an outer transaction (an idempotent
 * request's, opened at the same level) the change is a savepoint of it, so a change that changed
 * nothing undoes its events there too.
 */
@Injectable()
export class EventOutbox {
  /** Owners seen with a subscription lately, and until when: their changes go straight to the transaction. */
  private readonly watched = new Map<string, number>();
  private recorded = 0;

  constructor(
    private readonly database: Database,
    private readonly repository: EventsRepository,
    private readonly owners: SubscribedOwners,
  ) {}

  /** Deliveries recorded with committed changes since this instance started (read by WebhookOutboxMetrics). */
  get deliveriesRecorded(): number {
    return this.recorded;
  }

  /**
   * Makes a plant change with its events. `write` makes the change, adding `onlyIf` to its statement
   * when given, and says whether it changed a row; so does this.
   */
  async change<Change extends PlantChange>(
    change: Change,
    owner: string,
    plant: PlantChanges[Change],
    write: (onlyIf?: Condition) => Promise<boolean>,
  ): Promise<boolean> {
    const types = eventTypesOn(change);
    if (types.length === 0 || this.owners.knownWithout(owner)) return write();
    if (!this.isWatched(owner)) {
      if (await write(this.repository.noSubscriptionWants(owner, types))) return true;
      // Nothing changed: the row is not there (a delete of a missing plant), or a subscription
      // wants the events. Only the second needs the transaction. Without one, the change is made
      // again unconditionally: a subscription that stopped it may have gone since.
      if (!(await this.repository.subscriptionWants(owner, types))) return write();
    }
    const events = eventsOf(change, plant);
    let recorded = 0;
    try {
      const changed = await this.database.transaction(
        async () => {
          recorded = await this.repository.recordEvents(owner, events);
          if (recorded > 0) this.watch(owner);
          else this.watched.delete(owner);
          if (await write()) return true;
          // A change that may change nothing (a delete of a missing plant) undoes its events by
          // rolling back: its own transaction, or its savepoint in an outer one.
          throw new NothingChanged();
        },
        { retry: WRITE, isolation: READ_COMMITTED },
      );
      // Counted once committed (in an outer transaction, once it has joined it), not per try.
      this.recorded += recorded;
      return changed;
    } catch (error) {
      if (error instanceof NothingChanged) return false;
      throw error;
    }
  }

  private isWatched(owner: string): boolean {
    const until = this.watched.get(owner);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.watched.delete(owner);
    return false;
  }

  private watch(owner: string): void {
    this.watched.delete(owner);
    if (this.watched.size >= WATCHED_OWNERS) this.watched.delete(this.watched.keys().next().value!);
    this.watched.set(owner, Date.now() + WATCHED_FOR_MS);
  }
}
