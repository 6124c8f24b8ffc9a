export { createClient } from './client';
export type {
  CallOptions,
  ClientOptions,
  CreateOptions,
  DeleteOptions,
  ListOptions,
  Page,
  PlantList,
  PlantStoreClient,
} from './client';
export type { ApiPromise } from './api-promise';
export { PlantStoreError } from './errors';
export type { PlantStoreErrorKind } from './errors';
export type { Hooks, RequestEvent, ResponseEvent, RetryEvent } from './http';
export type { ApiResponse, RateLimit, WithResponse } from './response';
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
