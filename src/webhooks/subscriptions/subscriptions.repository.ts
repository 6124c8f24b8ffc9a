import { Injectable } from '@nestjs/common';
import { Database, EntityTable, NOW_MS, READ, Read, WRITE } from '../../database';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { WebhookEvent, isWebhookEvent } from '../events/events';
import { NULL, SHOWN, compileSubscriptionStatements } from './subscription-statements';
import { WebhookSubscription } from './webhook-subscription.entity';
import { FEED_ROW, WebhookSubscriptionFeed } from './webhook-subscription-feed.entity';

export interface SubscriptionRow {
  /** The id the API shows. */
  id: bigint;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  createdAt: number;
  disabledAt: number | null;
  disabledReason: string | null;
  /** Until when the secret a rotation replaced still signs, while it does. */
  previousSecretExpiresAt: number | null;
}

/** A change of a subscription (PATCH): what is given changes, `description: null` clears it. */
export interface SubscriptionChange {
  url?: string;
  events?: readonly WebhookEvent[];
  description?: string | null;
  enabled?: boolean;
}

/** The reason a subscription disabled through the API shows. */
export const DISABLED_BY_ITS_USER = 'disabled through the API';

/** A subscription as sending to it needs it: the live secrets, sealed, the current one first. */
export interface SendingTarget {
  key: bigint;
  id: bigint;
  url: string;
  sealedSecrets: string[];
}

export interface NewSubscription {
  /** Both the row's key and the id the API shows. */
  id: bigint;
  owner: string;
  url: string;
  events: readonly WebhookEvent[];
  description: string | null;
  sealedSecret: string;
  createdAt: number;
}

/** The feed's one row is made by the SubscriptionFeed migration, and nothing deletes it. */
class MissingFeedRow extends Error {
  constructor() {
    super('webhook_subscription_feed has no row: the database was not migrated, or the row was deleted');
  }
}

type Shown = Read<WebhookSubscription, (typeof SHOWN)[number]>;

/** Owners with a subscription made after a feed version (or without one), and the highest version read. */
export interface FeedPage {
  owners: string[];
  version: bigint;
  /** As many rows as the limit: there may be more. */
  full: boolean;
}

/**
 * The subscriptions table: a user's subscriptions, their signing secrets and the lease of a test of
 * one. The statements are made from the WebhookSubscription entity with TypeORM's query builder,
 * once, when the repository is made at start-up (subscription-statements.ts; a PATCH's, once per
 * set of fields it changes);
 * times are epoch milliseconds, those that decide something taken from the database's clock.
 */
@Injectable()
export class SubscriptionsRepository {
  private readonly table: EntityTable<WebhookSubscription>;
  private readonly statements: ReturnType<typeof compileSubscriptionStatements>;
  private readonly readShown: (row: Record<string, unknown>) => Shown;
  private readonly now: string;
  /** The feed's version raised, then read, in a new subscription's transaction. */
  private readonly raiseFeed: string;
  private readonly readFeed: string;
  private readonly readVersion: (row: Record<string, unknown>) => { version?: bigint };
  /** The statement of `ownersSince`: instances send it every FEED_POLL_MS, apart from any request. */
  readonly feedRead: string;

  constructor(
    private readonly database: Database,
    private readonly deliveries: DeliveriesRepository,
  ) {
    this.table = database.table(WebhookSubscription);
    this.now = database.sql(NOW_MS);
    this.statements = compileSubscriptionStatements(this.table, this.now);
    this.readShown = this.table.reader(SHOWN);
    const feed = database.table(WebhookSubscriptionFeed);
    this.raiseFeed = feed.compile(
      feed
        .update()
        .set({ version: () => 'version + 1' })
        .where('id = :row'),
      ['row'],
    );
    this.readFeed = feed.compile(feed.select('f', ['version']).where('f.id = :row'), ['row']);
    this.readVersion = feed.reader(['version']);
    this.feedRead = this.statements.ownersSince;
  }

  /**
   * Inserts the subscription unless the owner already has `limit`, with the count in the INSERT:
   * two requests at once on one server cannot both pass it (one waits for the other's locks, or
   * loses a deadlock and is run again). False when the owner is at the limit. In the same
   * transaction the subscription feed's version is raised and given to the subscription, so the
   * instances' polls of the feed read it (SubscribedOwners).
   */
  async insertSubscription(subscription: NewSubscription, limit: number): Promise<boolean> {
    const { id, owner, url, events, description, sealedSecret, createdAt } = subscription;
    return this.database.transaction(
      async () => {
        if ((await this.database.execute(this.raiseFeed, [FEED_ROW])) !== 1) throw new MissingFeedRow();
        const [feed] = await this.database.query(this.readFeed, [FEED_ROW]);
        const { version } = this.readVersion(feed);
        const parameters = [id, id, owner, url, JSON.stringify(events), description, sealedSecret, createdAt, version];
        return (await this.database.execute(this.statements.insert, [...parameters, owner, limit])) > 0;
      },
      { retry: WRITE },
    );
  }

  /**
   * Up to `limit` rows of owners with a subscription made after feed version `after` (-1: all of
   * them), or made without a version, and the highest version among them (`after` when none is
   * higher). An owner appears once per such subscription.
   */
  async ownersSince(after: bigint, limit: number): Promise<FeedPage> {
    const rows = await this.database.query(this.statements.ownersSince, [after, limit], READ);
    let version = after;
    const owners = rows.map((row) => {
      const read = this.statements.readOwner(row);
      if (read.feedVersion !== undefined && read.feedVersion > version) version = read.feedVersion;
      return read.owner!;
    });
    return { owners, version, full: rows.length >= limit };
  }

  async listSubscriptions(owner: string): Promise<SubscriptionRow[]> {
    return (await this.database.query(this.statements.list, [owner], READ)).map((row) => this.toRow(row));
  }

  /** The owner's subscription a path's id names (byPathId), as listSubscriptions shows it. */
  async getSubscription(owner: string, id: bigint): Promise<SubscriptionRow | undefined> {
    const [row] = await this.database.query(this.statements.get, [owner, id, id], READ);
    return row === undefined ? undefined : this.toRow(row);
  }

  /**
   * Changes what `change` gives of the owner's subscription, in one transaction: re-enabling it
   * stops its failure clock; disabling it holds what is pending (sent only if recovered). Undefined
   * when the owner has no such subscription.
   */
  async updateSubscription(
    owner: string,
    id: bigint,
    change: SubscriptionChange,
  ): Promise<SubscriptionRow | undefined> {
    return this.database.transaction(
      async () => {
        const found = await this.findSubscriptionState(owner, id);
        if (found === undefined) return undefined;
        const { sql, parameters } = this.changeOf(change);
        if (sql !== undefined) await this.database.execute(sql, [...parameters, found.key]);
        if (change.enabled === false && !found.disabled) await this.deliveries.holdPending(found.key);
        return this.getSubscription(owner, id);
      },
      { retry: WRITE },
    );
  }

  /**
   * A new signing secret for the owner's subscription; the one it replaces keeps signing for
   * `graceMs` (from now on the database's clock), and none before it does. Undefined when the owner
   * has no such subscription.
   */
  async rotateSecret(
    owner: string,
    id: bigint,
    sealedSecret: string,
    graceMs: number,
  ): Promise<SubscriptionRow | undefined> {
    return this.database.transaction(
      async () => {
        const changed =
          graceMs > 0
            ? await this.database.execute(this.statements.rotateKeeping, [graceMs, sealedSecret, owner, id, id])
            : await this.database.execute(this.statements.rotate, [sealedSecret, owner, id, id]);
        return changed > 0 ? this.getSubscription(owner, id) : undefined;
      },
      { retry: WRITE },
    );
  }

  /** The owner's subscription a path's id names, with what sending to it needs. */
  async sendingTarget(owner: string, id: bigint): Promise<SendingTarget | undefined> {
    const [row] = await this.database.query(this.statements.sendingTarget, [owner, id, id], READ);
    if (row === undefined) return undefined;
    const target = this.statements.readTarget(row);
    return {
      key: target.id!,
      id: target.publicId!,
      url: target.url!,
      sealedSecrets: [target.secret!, ...(target.previousSecret === undefined ? [] : [target.previousSecret])],
    };
  }

  /**
   * Takes the lease of a test of the subscription (by its key) for `leaseMs` on the database's
   * clock, unless a test whose lease has not ended holds it: one test of a subscription at a time,
   * whichever instances they are asked of. The lease's end, which endTestLease names, or undefined
   * when another test runs.
   */
  async takeTestLease(key: bigint, leaseMs: number): Promise<number | undefined> {
    return this.database.transaction(
      async () => {
        const taken = await this.database.execute(this.statements.takeTestLease, [leaseMs, key]);
        if (taken === 0) return undefined;
        const [row] = await this.database.query(this.statements.testLease, [key]);
        return Number(row.testingUntil);
      },
      { retry: WRITE },
    );
  }

  /** Ends a test's lease (`until`, as takeTestLease gave it), unless another test took the subscription since it ran out. */
  async endTestLease(key: bigint, until: number): Promise<void> {
    await this.database.execute(this.statements.endTestLease, [key, until], WRITE);
  }

  /** The key of the owner's subscription that a path's id names (byPathId), if there is one. */
  async findSubscription(owner: string, id: bigint): Promise<bigint | undefined> {
    return (await this.findSubscriptionState(owner, id))?.key;
  }

  /** The key of the owner's subscription that a path's id names, and whether it is disabled. */
  async findSubscriptionState(owner: string, id: bigint): Promise<{ key: bigint; disabled: boolean } | undefined> {
    const [row] = await this.database.query(this.statements.state, [owner, id, id], READ);
    if (row === undefined) return undefined;
    const state = this.statements.readState(row);
    return { key: state.id!, disabled: state.disabledAt !== undefined };
  }

  /**
   * The subscription a path's id names (byPathId, in subscription-statements.ts) and everything
   * recorded for it go together, or not at all.
   */
  async deleteSubscription(owner: string, id: bigint): Promise<boolean> {
    return this.database.transaction(
      async () => {
        const key = await this.findSubscription(owner, id);
        if (key === undefined) return false;
        const deleted = await this.database.execute(this.statements.delete, [owner, key]);
        if (deleted === 0) return false;
        await this.deliveries.forgetSubscription(key);
        return true;
      },
      { retry: WRITE },
    );
  }

  /** Up to `limit` signing secrets in id order after `after`, that do not start with `prefix`. */
  async secretsNotStartingWith(
    prefix: string,
    after: bigint | undefined,
    limit: number,
  ): Promise<{ id: bigint; secret: string }[]> {
    const rows = await this.database.query(this.statements.secrets, [after ?? -(2n ** 63n), `${prefix}%`, limit], READ);
    return rows.map((row) => ({ id: this.statements.readSecret(row).id!, secret: String(row.secret) }));
  }

  /** As secretsNotStartingWith, for the secrets a rotation replaced that still sign (those that no longer do are never opened again). */
  async previousSecretsNotStartingWith(
    prefix: string,
    after: bigint | undefined,
    limit: number,
  ): Promise<{ id: bigint; secret: string }[]> {
    const parameters = [after ?? -(2n ** 63n), `${prefix}%`, limit];
    const rows = await this.database.query(this.statements.previousSecrets, parameters, READ);
    return rows.map((row) => ({ id: this.statements.readSecret(row).id!, secret: String(row.previousSecret) }));
  }

  /** As replaceSecret, for the secret a rotation replaced. */
  async replacePreviousSecret(id: bigint, previous: string, secret: string): Promise<boolean> {
    return (await this.database.execute(this.statements.replacePreviousSecret, [secret, id, previous], WRITE)) > 0;
  }

  /** Writes `secret` in place of `previous`, only if the subscription still holds `previous`; whether it did. */
  async replaceSecret(id: bigint, previous: string, secret: string): Promise<boolean> {
    return (await this.database.execute(this.statements.replaceSecret, [secret, id, previous], WRITE)) > 0;
  }

  /** Subscriptions in the whole database, enabled and disabled. */
  async countSubscriptions(): Promise<{ enabled: number; disabled: number }> {
    const [row] = await this.database.query(this.statements.count, []);
    return { enabled: Number(row.n) - Number(row.disabled), disabled: Number(row.disabled) };
  }

  /** The UPDATE of a change and its parameters (but the key, last); none when it changes nothing. */
  private changeOf(change: SubscriptionChange): { sql?: string; parameters: unknown[] } {
    const given = (['url', 'events', 'description'] as const).filter((field) => change[field] !== undefined);
    const enabled = change.enabled === undefined ? '' : String(change.enabled);
    if (given.length === 0 && enabled === '') return { parameters: [] };
    const parameters: unknown[] = given.map((field) =>
      field === 'events' ? JSON.stringify(change.events) : change[field],
    );
    if (change.enabled === false) parameters.push(DISABLED_BY_ITS_USER);
    const sql = this.table.shapedStatement(`${given.join()} ${enabled}`, () => {
      const set: Record<string, () => string> = {};
      for (const field of given) set[field] = () => `:${field}`;
      if (change.enabled === true) Object.assign(set, { disabledAt: NULL, disabledReason: NULL, failingSince: NULL });
      // The reason first: MySQL assigns left to right, reading what it has already set.
      if (change.enabled === false) {
        set.disabledReason = () => 'CASE WHEN disabledAt IS NULL THEN :reason ELSE disabledReason END';
        set.disabledAt = () => `COALESCE(disabledAt, ${this.now})`;
      }
      const names = [...given, ...(change.enabled === false ? ['reason'] : []), 'key'];
      return this.table.compile(this.table.update().set(set).where('id = :key'), names);
    });
    return { sql, parameters };
  }

  private toRow(row: Record<string, unknown>): SubscriptionRow {
    const shown = this.readShown(row);
    return {
      id: shown.publicId!,
      url: shown.url!,
      events: (JSON.parse(shown.events ?? '[]') as string[]).filter(isWebhookEvent),
      description: shown.description ?? null,
      createdAt: Number(shown.createdAt),
      disabledAt: shown.disabledAt === undefined ? null : Number(shown.disabledAt),
      disabledReason: shown.disabledReason ?? null,
      previousSecretExpiresAt:
        shown.previousSecretExpiresAt === undefined ? null : Number(shown.previousSecretExpiresAt),
    };
  }
}
