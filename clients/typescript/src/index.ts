export { createClient } from './client';
export type {
  CallOptions,
  ChangeOptions,
  ClientOptions,
  CreateOptions,
  DeleteOptions,
  EventList,
  EventListOptions,
  ListOptions,
  Page,
  PagedList,
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
  Event,
  NewPlant,
  NewWebhook,
  Plant,
  PlantCreatedEvent,
  PlantDeletedEvent,
  ResentWebhookDelivery,
  RotatedWebhook,
  Webhook,
  WebhookAttempt,
  WebhookChange,
  WebhookEvent,
  WebhookRecoveryStarted,
  WebhookSecretRotation,
  WebhookTestEvent,
  WebhookTestResult,
} from './types';
export type { components, operations, paths } from './schema';
