import type { components } from './schema';

type Schemas = components['schemas'];

/** A plant as the service stores it: `tag` is absent when the plant has none. */
export type Plant = Schemas['Plant'];
/** What `plants.create` sends: `tag` may be left out (or null) for none. */
export type NewPlant = Schemas['NewPlant'];
export type NewWebhook = Schemas['NewWebhook'];
/** A subscription as `webhooks.create` returns it, with its signing `secret` (shown only then). */
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type Webhook = Schemas['Webhook'];
export type WebhookAttempt = Schemas['WebhookAttempt'];
export type WebhookEvent = NewWebhook['events'][number];
/** The body of a `plant.created` delivery (docs/webhooks.md says how to verify its signature). */
export type PlantCreatedEvent = Schemas['PlantCreatedEvent'];
/** The body of a `plant.deleted` delivery. */
export type PlantDeletedEvent = Schemas['PlantDeletedEvent'];
/** What `webhooks.update` sends: a JSON Merge Patch; `description: null` removes it. */
export type WebhookChange = Schemas['WebhookChange'];
/** What `webhooks.rotateSecret` may send: how long the replaced secret keeps signing (24 hours when left out). */
export type WebhookSecretRotation = Partial<Schemas['WebhookSecretRotation']>;
/** A subscription as `webhooks.rotateSecret` returns it, with its new signing `secret` (shown only then). */
export type RotatedWebhook = Schemas['RotatedWebhook'];
/** How the endpoint took the `webhook.test` event `webhooks.test` sent. */
export type WebhookTestResult = Schemas['WebhookTestResult'];
/** What `webhooks.resend` answers: the delivery is due again, with this `eventId` (its `webhook-id`). */
export type ResentWebhookDelivery = Schemas['ResentWebhookDelivery'];
/** What `webhooks.recover` answers: the recovery of what failed or was held since `since` has started. */
export type WebhookRecoveryStarted = Schemas['WebhookRecoveryStarted'];
/** An event as `events.list` yields it: `id` is the `webhook-id` its deliveries carried. */
export type Event = Schemas['Event'];
/** The body of a `webhook.test` delivery, sent only by `webhooks.test`. */
export type WebhookTestEvent = Schemas['WebhookTestEvent'];
