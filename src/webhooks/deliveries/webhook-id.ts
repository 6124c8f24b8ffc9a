import { DeliveryRef } from './claims';

/**
 * The `webhook-id` of an event recorded with webhook_events: one for the event, shared by every
 * subscription's delivery of it and shown by GET /events, the same on every attempt, resend and
 * recovery.
 */
export function eventWebhookId(eventId: bigint): string {
  return `evt_${eventId}`;
}

/**
 * What a receiver sees as `webhook-id`: the event's id, or for a delivery recorded before events
 * were (by the previous release, during the upgrade that brought them) the id it has always been
 * sent with, its own. The two never meet: `evt_` and `msg_` are told apart by their prefix.
 */
export function webhookId(delivery: { id: bigint; eventId: bigint | null }): string {
  return delivery.eventId === null ? `msg_${delivery.id}` : eventWebhookId(delivery.eventId);
}

const WEBHOOK_ID = /^(evt|msg)_([1-9][0-9]{0,18})$/;

/** The delivery of a subscription a `webhook-id` names, or undefined when it names none that could be. */
export function parseWebhookId(text: string): DeliveryRef | undefined {
  const match = WEBHOOK_ID.exec(text);
  if (match === null) return undefined;
  const id = BigInt(match[2]);
  if (id > 2n ** 63n - 1n) return undefined;
  return match[1] === 'evt' ? { eventId: id } : { deliveryId: id };
}
