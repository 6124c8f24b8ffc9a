export { createClient } from './client';
export type { CallOptions, ClientOptions, CreateOptions, ListOptions, PlantStoreClient } from './client';
export { PlantStoreError } from './errors';
export type { PlantStoreErrorKind } from './errors';
export type { RetryEvent } from './http';
export type {
  CreatedWebhook,
  NewPlant,
  NewWebhook,
  Plant,
  PlantCreatedEvent,
  PlantDeletedEvent,
  Webhook,
  WebhookAttempt,
  WebhookEvent,
} from './types';
export type { components, operations, paths } from './schema';
