// Generated from openapi.json by `npm run generate -w clients/typescript`: do not edit.
// src/schema.spec.ts fails when this file is stale.

import type { components, operations } from './schema';
import { type Expected, type Shape, many, one } from './shapes';

type Schemas = components['schemas'];

// Every property of each answer schema with its JSON type, `?` when it may be absent.

const PLANT: Shape<Schemas['Plant']> = {
  id: 'int64',
  name: 'string',
  tag: 'string?',
};

const CREATED_WEBHOOK: Shape<Schemas['CreatedWebhook']> = {
  id: 'int64',
  url: 'string',
  events: 'string[]',
  description: 'string?',
  createdAt: 'string',
  enabled: 'boolean',
  disabledAt: 'string?',
  disabledReason: 'string?',
  previousSecretExpiresAt: 'string?',
  secret: 'string',
};

const WEBHOOK: Shape<Schemas['Webhook']> = {
  id: 'int64',
  url: 'string',
  events: 'string[]',
  description: 'string?',
  createdAt: 'string',
  enabled: 'boolean',
  disabledAt: 'string?',
  disabledReason: 'string?',
  previousSecretExpiresAt: 'string?',
};

const ROTATED_WEBHOOK: Shape<Schemas['RotatedWebhook']> = {
  id: 'int64',
  url: 'string',
  events: 'string[]',
  description: 'string?',
  createdAt: 'string',
  enabled: 'boolean',
  disabledAt: 'string?',
  disabledReason: 'string?',
  previousSecretExpiresAt: 'string?',
  secret: 'string',
};

const WEBHOOK_TEST_RESULT: Shape<Schemas['WebhookTestResult']> = {
  eventId: 'string',
  delivered: 'boolean',
  statusCode: 'number?',
  error: 'string?',
  attemptedAt: 'string',
  durationMs: 'number',
};

const RESENT_WEBHOOK_DELIVERY: Shape<Schemas['ResentWebhookDelivery']> = {
  eventId: 'string',
  type: 'string',
};

const WEBHOOK_RECOVERY_STARTED: Shape<Schemas['WebhookRecoveryStarted']> = {
  since: 'string',
};

const WEBHOOK_ATTEMPT: Shape<Schemas['WebhookAttempt']> = {
  eventId: 'string',
  type: 'string',
  attempt: 'number',
  statusCode: 'number?',
  error: 'string?',
  attemptedAt: 'string',
  durationMs: 'number',
};

const EVENT: Shape<Schemas['Event']> = {
  id: 'string',
  type: 'string',
  timestamp: 'string',
  data: 'object',
};

/** The body of each operation's success, by operationId: the operations with a JSON answer. */
export const ANSWERS = {
  createPlant: one<Schemas['Plant']>('Plant', PLANT),
  listPlants: many<Schemas['Plant']>('Plant', PLANT),
  createWebhook: one<Schemas['CreatedWebhook']>('CreatedWebhook', CREATED_WEBHOOK),
  listWebhooks: many<Schemas['Webhook']>('Webhook', WEBHOOK),
  updateWebhook: one<Schemas['Webhook']>('Webhook', WEBHOOK),
  rotateWebhookSecret: one<Schemas['RotatedWebhook']>('RotatedWebhook', ROTATED_WEBHOOK),
  testWebhook: one<Schemas['WebhookTestResult']>('WebhookTestResult', WEBHOOK_TEST_RESULT),
  resendWebhookDelivery: one<Schemas['ResentWebhookDelivery']>('ResentWebhookDelivery', RESENT_WEBHOOK_DELIVERY),
  recoverWebhook: one<Schemas['WebhookRecoveryStarted']>('WebhookRecoveryStarted', WEBHOOK_RECOVERY_STARTED),
  listWebhookDeliveries: many<Schemas['WebhookAttempt']>('WebhookAttempt', WEBHOOK_ATTEMPT),
  listEvents: many<Schemas['Event']>('Event', EVENT),
} satisfies Partial<Record<keyof operations, Expected<unknown>>>;
