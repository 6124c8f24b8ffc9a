import { WebhookEvent } from '../events/events';

/** A delivery of a subscription, named in a path by its event's id or (recorded before events were) its own. */
export type DeliveryRef = { eventId: bigint } | { deliveryId: bigint };

/** How many more attempts one subscription, and one owner, may have in flight on the claiming instance. */
export interface ClaimRoom {
  subscription(id: bigint): number;
  owner(owner: string): number;
}

export const NO_CAPS: ClaimRoom = { subscription: () => Infinity, owner: () => Infinity };

/** What a claim took, and whether more is due for which it had room (so the next claim should follow at once). */
export interface Claimed {
  deliveries: ClaimedDelivery[];
  more: boolean;
}

export interface AttemptRow {
  deliveryId: bigint;
  /** The event the delivery carried, if it was recorded with one. */
  eventId: bigint | null;
  type: WebhookEvent;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  attemptedAt: number;
  durationMs: number;
}

/** A delivery claimed by one instance, with what it needs to send it. */
export interface ClaimedDelivery {
  id: bigint;
  /** Its event (webhook_events); null when recorded before events were: its `webhook-id` is then its own. */
  eventId: bigint | null;
  subscriptionId: bigint;
  owner: string;
  type: WebhookEvent;
  /** The body's `data`, as recorded with the change (exact JSON). */
  data: string;
  occurredAt: number;
  /** Attempts made before this one. */
  attempts: number;
  /** Attempts made before it was last resent or recovered: the retry schedule counts from there. */
  retryFrom: number;
  url: string;
  sealedSecret: string;
  /** The secret a rotation replaced, while it still signs. */
  previousSealedSecret: string | null;
  disabled: boolean;
}

export type AttemptOutcome =
  /** 2xx. */
  | { kind: 'delivered' }
  /** Another attempt after `delayMs`. */
  | { kind: 'retry'; delayMs: number }
  /** No attempts left. */
  | { kind: 'failed' }
  /** 410 Gone: disable the subscription and hold what is pending. */
  | { kind: 'disable'; reason: string }
  /** Not sent: the subscription was disabled meanwhile. Held, to be recovered. */
  | { kind: 'hold' };

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /**
   * When the attempt began, by this process's `performance.now()`: it is stored as that long before
   * the statement that records it, on the database's clock.
   */
  startedAt: number;
}

/** An attempt made (or a delivery dropped without one), to record with its consequence. */
export interface FinishedAttempt {
  delivery: ClaimedDelivery;
  attempt: AttemptRecord;
  outcome: AttemptOutcome;
}

/** Whether something was sent: a delivery dropped because its subscription is disabled was not. */
export const wasAttempted = ({ attempt }: FinishedAttempt): boolean =>
  attempt.statusCode !== null || attempt.error !== null;

/**
 * Up to `slots` claim slots dealt among `due` (waiting longest first), one at a time in turn to
 * each that still has room, its owner's room shared by its subscriptions: the subscriptions that
 * get some, with how many, and whether it (and its owner) would have had room for more.
 */
export function shareSlots(
  due: readonly { id: bigint; owner: string }[],
  slots: number,
  room: ClaimRoom,
): { id: bigint; owner: string; slots: number; roomLeft: boolean }[] {
  const shares = due.map((subscription) => ({ ...subscription, slots: 0, room: room.subscription(subscription.id) }));
  const ownerRoom = new Map(due.map(({ owner }) => [owner, room.owner(owner)]));
  let left = slots;
  for (let dealt = true; dealt && left > 0;) {
    dealt = false;
    for (const share of shares) {
      if (left === 0) break;
      if (share.slots >= share.room || ownerRoom.get(share.owner)! <= 0) continue;
      share.slots += 1;
      ownerRoom.set(share.owner, ownerRoom.get(share.owner)! - 1);
      left -= 1;
      dealt = true;
    }
  }
  return shares
    .filter((share) => share.slots > 0)
    .map(({ id, owner, slots: dealt, room: own }) => ({
      id,
      owner,
      slots: dealt,
      roomLeft: dealt < own && ownerRoom.get(owner)! > 0,
    }));
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
