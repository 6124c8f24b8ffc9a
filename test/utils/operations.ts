import { readFileSync } from 'node:fs';
import { OPENAPI_PATH } from './openapi-contract';
import { TestApp, bearer } from './test-app';

/**
 * The operations of the OpenAPI document, and what a spec sends each one, by operation id: the one
 * place a new operation gets its request data. The specs that go through every operation (every
 * refusal, every replay, every route behind a token) take their list from the document or the
 * router, never from a list of their own, and fail on an operation that has no data here.
 */

interface DocumentedOperation {
  operationId?: string;
  security?: unknown[];
  requestBody?: unknown;
  parameters?: { in: string; name: string; schema?: { type?: string } }[];
  responses?: Record<string, DocumentedResponse>;
}

export interface DocumentedResponse {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: { $ref?: string } }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, DocumentedOperation>>;
}

export interface Operation {
  /** `POST` */
  method: string;
  /** The path template, as the document names it. */
  path: string;
  /** `POST /plants/{id}` */
  label: string;
  id: string;
  needsToken: boolean;
  takesBody: boolean;
  /** Documents `Idempotency-Key`. */
  idempotent: boolean;
  pathParameters: { name: string; type?: string }[];
  responses: Record<string, DocumentedResponse>;
}

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Each operation of `document`. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        label: `${method.toUpperCase()} ${path}`,
        id: operation.operationId ?? `${method} ${path}`,
        // Declared empty (`[]`) on a public operation; any requirement means a token.
        needsToken: (operation.security ?? []).length > 0,
        takesBody: operation.requestBody !== undefined,
        idempotent: (operation.parameters ?? []).some(
          (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
        ),
        pathParameters: (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => ({ name: parameter.name, type: parameter.schema?.type })),
        responses: operation.responses ?? {},
      })),
  );
}

/** The committed openapi.json, which test/openapi.e2e-spec.ts holds to the served document. */
export const COMMITTED = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
/** Its operations, known when a spec declares its tests. */
export const DOCUMENTED = operationsOf(COMMITTED);

interface Sample {
  /** A body the operation accepts: every operation that takes a body has one. */
  body?: () => string;
  /** A valid value of each path parameter that is not an integer id (those are 1). */
  pathValues?: Record<string, string>;
  /**
   * The path of a target of the caller's own that the operation succeeds on, made fresh: every
   * idempotent operation whose path names a resource has one, to show its replay.
   */
  target?: (t: TestApp, token: string) => Promise<string>;
}

const fresh = { id: 2n ** 53n + 1n };
const nextId = () => (fresh.id += 1n);

const post = (t: TestApp, token: string, path: string, body: string) =>
  t.http().post(path).set(bearer(token)).set('Content-Type', 'application/json').send(body);

/** A new subscription of the caller's, to a port nothing listens on: its path. */
async function subscription(t: TestApp, token: string, events = '["plant.created"]'): Promise<string> {
  const created = await post(t, token, '/webhooks', `{"url":"http://127.0.0.1:9/target","events":${events}}`);
  return `/webhooks/${(created.body as { id: number }).id}`;
}

/** A new plant of the caller's: its path. */
async function plant(t: TestApp, token: string, name: string): Promise<string> {
  const id = nextId();
  await post(t, token, '/plants', `{"id":${id},"name":"${name}"}`);
  return `/plants/${id}`;
}

const SAMPLES: Record<string, Sample> = {
  createPlant: { body: () => `{"id":${nextId()},"name":"Fern","tag":"green"}` },
  deletePlant: { target: (t, token) => plant(t, token, 'Doomed') },
  createWebhook: { body: () => '{"url":"http://127.0.0.1:9/hooks","events":["plant.created"]}' },
  deleteWebhook: { target: (t, token) => subscription(t, token, '["plant.deleted"]') },
  updateWebhook: { body: () => '{"description":"Changed","enabled":false}', target: subscription },
  rotateWebhookSecret: {
    body: () => '{"gracePeriodSeconds":60}',
    target: async (t, token) => `${await subscription(t, token)}/rotate-secret`,
  },
  testWebhook: { target: async (t, token) => `${await subscription(t, token)}/test` },
  resendWebhookDelivery: {
    pathValues: { eventId: 'evt_1' },
    target: async (t, token) => {
      const path = await subscription(t, token);
      await plant(t, token, 'Resent');
      const [event] = (await t.http().get('/events?limit=1').set(bearer(token))).body as { id: string }[];
      return `${path}/deliveries/${event.id}/resend`;
    },
  },
  recoverWebhook: {
    body: () => `{"since":"${new Date(Date.now() - 3_600_000).toISOString()}"}`,
    target: async (t, token) => `${await subscription(t, token)}/recover`,
  },
};

const WHERE = 'in SAMPLES of test/utils/operations.ts';

/** A body the operation accepts, for a request that must be refused for another reason than its body. */
export function bodyOf(operation: Operation): string {
  const body = SAMPLES[operation.id]?.body;
  if (body === undefined) throw new Error(`${operation.label} (${operation.id}) takes a body: give one ${WHERE}`);
  return body();
}

/** The request target with each path parameter filled in: a valid value, or the one given. */
export function pathOf(operation: Operation, value?: string): string {
  let path = operation.path;
  for (const { name, type } of operation.pathParameters) {
    const known = SAMPLES[operation.id]?.pathValues?.[name];
    if (value === undefined && type !== 'integer' && known === undefined) {
      throw new Error(`${operation.label} (${operation.id}): give a value for {${name}} ${WHERE}`);
    }
    path = path.replace(`{${name}}`, value ?? known ?? '1');
  }
  return path;
}

/** The path of a target the operation succeeds on, made for the caller. */
export async function successPathOf(operation: Operation, t: TestApp, token: string): Promise<string> {
  const target = SAMPLES[operation.id]?.target;
  if (target) return target(t, token);
  if (operation.pathParameters.length > 0) {
    throw new Error(`${operation.label} (${operation.id}) names a resource: give a target it succeeds on ${WHERE}`);
  }
  return operation.path;
}

/**
 * What is missing for `operations`: a body, a path value, a target of an idempotent operation on a
 * resource; and data kept for an operation the document no longer has.
 */
export function missingSamples(operations: Operation[]): string[] {
  const missing = operations.flatMap((operation) => {
    const sample = SAMPLES[operation.id] ?? {};
    return [
      ...(operation.takesBody && !sample.body ? [`${operation.id}: a body`] : []),
      ...operation.pathParameters
        .filter(({ name, type }) => type !== 'integer' && sample.pathValues?.[name] === undefined)
        .map(({ name }) => `${operation.id}: a value for {${name}}`),
      ...(operation.idempotent && operation.pathParameters.length > 0 && !sample.target
        ? [`${operation.id}: a target it succeeds on`]
        : []),
    ];
  });
  const ids = new Set(operations.map((operation) => operation.id));
  const stale = Object.keys(SAMPLES)
    .filter((id) => !ids.has(id))
    .map((id) => `${id}: no such operation`);
  return [...missing, ...stale];
}
