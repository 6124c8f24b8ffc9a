import { type Answer, invalidResponse, readJson } from './http';
import type { components, operations } from './schema';
import type {
  CreatedWebhook,
  Event,
  Plant,
  ResentWebhookDelivery,
  RotatedWebhook,
  Webhook,
  WebhookAttempt,
  WebhookRecoveryStarted,
  WebhookTestResult,
} from './types';

type SchemaName = keyof components['schemas'];

/** The JSON type of a property as the client checks it (formats and enums aside: a date-time is a string). */
type Kind<V> = V extends bigint
  ? 'int64'
  : V extends string
    ? 'string'
    : V extends number
      ? 'number'
      : V extends boolean
        ? 'boolean'
        : V extends readonly string[]
          ? 'string[]'
          : V extends object
            ? 'object'
            : never;

/**
 * Every documented property of `T` with its JSON type, `?` when it may be absent. The compiler
 * holds it to the type generated from openapi.json (a property missing, extra or of another type
 * does not compile) and src/shapes.spec.ts holds it to openapi.json itself.
 */
export type Shape<T> = {
  [K in keyof T]-?: undefined extends T[K] ? `${Kind<Exclude<T[K], undefined>>}?` : Kind<T[K]>;
};

const PLANT: Shape<Plant> = { id: 'int64', name: 'string', tag: 'string?' };
const WEBHOOK: Shape<Webhook> = {
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
const CREATED_WEBHOOK: Shape<CreatedWebhook> = { ...WEBHOOK, secret: 'string' };
const WEBHOOK_ATTEMPT: Shape<WebhookAttempt> = {
  eventId: 'string',
  type: 'string',
  attempt: 'number',
  statusCode: 'number?',
  error: 'string?',
  attemptedAt: 'string',
  durationMs: 'number',
};

const ROTATED_WEBHOOK: Shape<RotatedWebhook> = { ...WEBHOOK, secret: 'string' };
const WEBHOOK_TEST_RESULT: Shape<WebhookTestResult> = {
  eventId: 'string',
  delivered: 'boolean',
  statusCode: 'number?',
  error: 'string?',
  attemptedAt: 'string',
  durationMs: 'number',
};
const RESENT_DELIVERY: Shape<ResentWebhookDelivery> = { eventId: 'string', type: 'string' };
const RECOVERY_STARTED: Shape<WebhookRecoveryStarted> = { since: 'string' };
const EVENT: Shape<Event> = { id: 'string', type: 'string', timestamp: 'string', data: 'object' };

/** What a successful answer's body must be: one `schema` object, or a JSON array of them. */
export interface Expected<T> {
  schema: SchemaName;
  list: boolean;
  shape: Readonly<Record<string, string>>;
  /** Only carries `T` to `readChecked`. */
  readonly data?: T;
}

const one = <T>(schema: SchemaName, shape: Shape<T>): Expected<T> => ({ schema, list: false, shape });
const many = <T>(schema: SchemaName, shape: Shape<T>): Expected<T[]> => ({ schema, list: true, shape });

/** The body of each operation's success, by operationId (src/shapes.spec.ts checks them against openapi.json). */
export const ANSWERS = {
  createPlant: one('Plant', PLANT),
  listPlants: many('Plant', PLANT),
  createWebhook: one('CreatedWebhook', CREATED_WEBHOOK),
  listWebhooks: many('Webhook', WEBHOOK),
  listWebhookDeliveries: many('WebhookAttempt', WEBHOOK_ATTEMPT),
  updateWebhook: one('Webhook', WEBHOOK),
  rotateWebhookSecret: one('RotatedWebhook', ROTATED_WEBHOOK),
  testWebhook: one('WebhookTestResult', WEBHOOK_TEST_RESULT),
  resendWebhookDelivery: one('ResentWebhookDelivery', RESENT_DELIVERY),
  recoverWebhook: one('WebhookRecoveryStarted', RECOVERY_STARTED),
  listEvents: many('Event', EVENT),
} satisfies Partial<Record<keyof operations, Expected<unknown>>>;

/**
 * The answer's body, if it has the documented shape: the documented properties present and of
 * their types (properties the client does not know of are let through, so the service may add
 * some). Otherwise an `invalid-response` error that names the first difference, never a value.
 */
export function readChecked<T>(answer: Answer, expected: Expected<T>): T {
  const body = readJson(answer);
  const problem = expected.list ? listProblem(body, expected.shape) : objectProblem(body, expected.shape, 'the body');
  if (problem !== undefined) throw invalidResponse(answer, problem);
  return body as T;
}

function listProblem(value: unknown, shape: Expected<unknown>['shape']): string | undefined {
  if (!Array.isArray(value)) return 'the body is not a JSON array';
  for (const [index, item] of value.entries()) {
    const problem = objectProblem(item, shape, `item ${index}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function objectProblem(value: unknown, shape: Expected<unknown>['shape'], where: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${where} is not a JSON object`;
  const object = value as Record<string, unknown>;
  for (const [name, kind] of Object.entries(shape)) {
    const optional = kind.endsWith('?');
    const type = optional ? kind.slice(0, -1) : kind;
    if (!Object.hasOwn(object, name)) {
      if (optional) continue;
      return `${where} has no ${name}`;
    }
    if (!isOfKind(object[name], type)) return `${name} of ${where} is not ${ARTICLES[type] ?? type}`;
  }
  return undefined;
}

const ARTICLES: Record<string, string> = {
  int64: 'an int64',
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  'string[]': 'an array of strings',
  object: 'a JSON object',
};

function isOfKind(value: unknown, kind: string): boolean {
  switch (kind) {
    case 'int64':
      // parseJson has made every `id` a bigint in the int64 range; anything else is not one.
      return typeof value === 'bigint';
    case 'number':
      return typeof value === 'number';
    case 'string[]':
      return Array.isArray(value) && value.every((item) => typeof item === 'string');
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return typeof value === kind;
  }
}
