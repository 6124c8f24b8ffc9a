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
