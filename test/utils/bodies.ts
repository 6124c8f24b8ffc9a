import { isInteger, parse, stringify } from 'lossless-json';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The bodies the service answers and sends, as the specs expect them: one builder per resource,
 * each made from its schema in the committed openapi.json (which test/openapi.e2e-spec.ts holds to
 * what the service serves). A spec gives the values it knows; the builder makes the whole body of
 * them, exactly: every property the schema declares and no other, an optional one absent unless
 * given. A property the service sets as it stores the resource (a date-time it requires, such as a
 * creation date) is matched as any date-time unless given; any other the schema requires must be
 * given. So a field added to a resource changes its schema, and with it every spec's expected body,
 * and no spec.
 */

interface PropertySchema {
  type?: string;
  format?: string;
  example?: unknown;
}
interface ObjectSchema {
  properties: Record<string, PropertySchema>;
  required?: string[];
}

const SCHEMAS = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as {
    components: { schemas: Record<string, ObjectSchema> };
  }
).components.schemas;

const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * Any date and time: RFC 3339 text in a body, a valid Date in what a repository or service
 * returns (JSON writes it as that text). An asymmetric matcher, as `expect.any()` is.
 */
export const anyDateTime = {
  $$typeof: Symbol.for('jest.asymmetricMatcher'),
  asymmetricMatch: (value: unknown) =>
    (typeof value === 'string' && DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))) ||
    (value instanceof Date && !Number.isNaN(value.getTime())),
  toString: () => 'AnyDateTime',
  toAsymmetricMatcher: () => 'AnyDateTime',
};

/** JSON text as a careful client reads it: every integer a bigint, exact; other numbers as numbers. */
export function exactBody<T = unknown>(text: string): T {
  return parse(text, undefined, (n: string) => (isInteger(n) ? BigInt(n) : Number(n))) as T;
}

/** A body of `schema` with the values given (see the top of this file). */
export function bodyOf(schema: string, given: object): Record<string, unknown> {
  const declared = SCHEMAS[schema];
  if (declared?.properties === undefined) throw new Error(`openapi.json has no object schema ${schema}`);
  const values = given as Record<string, unknown>;
  const unknown = Object.keys(values).filter((name) => !Object.hasOwn(declared.properties, name));
  if (unknown.length > 0) throw new Error(`${schema} declares no ${unknown.join(', ')}`);
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(declared.properties)) {
    if (Object.hasOwn(values, name)) {
      if (values[name] !== undefined) body[name] = values[name];
    } else if (declared.required?.includes(name)) {
      if (property.format !== 'date-time') throw new Error(`${schema} requires ${name}: give it`);
      body[name] = anyDateTime;
    }
  }
  return body;
}

/**
 * A body of `schema` with concrete values, for a spec that hands a body to something that reads it
 * (the contract checker, a stored answer): the values given, and the schema's example for each
 * other property it requires. A value given as undefined is left out.
 */
export function exampleBodyOf(schema: string, given: object): Record<string, unknown> {
  const declared = SCHEMAS[schema];
  if (declared?.properties === undefined) throw new Error(`openapi.json has no object schema ${schema}`);
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(declared.properties)) {
    if (Object.hasOwn(given, name)) body[name] = (given as Record<string, unknown>)[name];
    else if (declared.required?.includes(name)) body[name] = property.example;
  }
  return body;
}

type Id = bigint | number;

/** The fields a client gives a plant. */
export interface PlantFields {
  id: Id;
  name: string;
  tag?: string | null;
}

/** A plant as the API answers it (`Plant`): a null or missing tag left out; other properties may be given. */
export function expectedPlant<T extends PlantFields>(plant: T): Record<string, unknown> {
  return bodyOf('Plant', { ...plant, tag: plant.tag ?? undefined });
}

/**
 * A plant as a service or a stored answer would hold it, for a spec to hand on: the fields given,
 * the Plant schema's examples for the others it requires (a null or missing tag left out).
 */
export function examplePlant(plant: PlantFields): Record<string, unknown> {
  return exampleBodyOf('Plant', { ...plant, tag: plant.tag ?? undefined });
}

/**
 * A plant body as JSON text, int64 exact: the fields given (a LosslessNumber as its digits: an id
 * no int64 is), the Plant schema's examples for the others it requires.
 */
export function plantText(plant: { id?: unknown; name?: unknown; tag?: unknown }): string {
  return stringify(exampleBodyOf('Plant', plant)) as string;
}

/** A webhook subscription as the API answers it (`Webhook`), enabled unless said otherwise. */
export function expectedWebhook(webhook: {
  id: unknown;
  url: string;
  events: readonly string[];
  [field: string]: unknown;
}): Record<string, unknown> {
  return bodyOf('Webhook', { enabled: true, ...webhook });
}

/** A signing secret as the service makes them: `whsec_` and 32 bytes in base64. */
export const aSecret = expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) as unknown as string;

/** The answer to POST /webhooks (`CreatedWebhook`): the subscription with a new secret. */
export function expectedCreatedWebhook(webhook: Parameters<typeof expectedWebhook>[0]): Record<string, unknown> {
  return bodyOf('CreatedWebhook', { enabled: true, secret: aSecret, ...webhook });
}

/** The answer to POST /webhooks/{id}/rotate-secret (`RotatedWebhook`): the subscription with its new secret. */
export function expectedRotatedWebhook(webhook: Parameters<typeof expectedWebhook>[0]): Record<string, unknown> {
  return bodyOf('RotatedWebhook', { enabled: true, secret: aSecret, ...webhook });
}

/** The `data` of a plant event: the plant as created, or the id of the one deleted. */
export function expectedEventData<T extends PlantFields>(type: 'plant.created', plant: T): Record<string, unknown>;
export function expectedEventData(type: 'plant.deleted', plant: { id: Id }): Record<string, unknown>;
export function expectedEventData(type: string, plant: PlantFields | { id: Id }): Record<string, unknown> {
  return type === 'plant.created'
    ? bodyOf('PlantCreatedEventData', expectedPlant(plant as PlantFields))
    : bodyOf('PlantDeletedEventData', plant);
}

/** The body of a plant event as a subscription receives it (`PlantCreatedEvent`, `PlantDeletedEvent`). */
export function expectedDelivery<T extends PlantFields>(type: 'plant.created', plant: T): Record<string, unknown>;
export function expectedDelivery(type: 'plant.deleted', plant: { id: Id }): Record<string, unknown>;
export function expectedDelivery(type: string, plant: PlantFields | { id: Id }): Record<string, unknown> {
  const data = expectedEventData(type as 'plant.created', plant as PlantFields);
  return bodyOf(type === 'plant.created' ? 'PlantCreatedEvent' : 'PlantDeletedEvent', { type, data });
}

/** An event as GET /events lists it (`Event`): its id `evt_<n>` unless given. */
export function expectedEvent<T extends PlantFields>(
  type: 'plant.created',
  plant: T,
  event?: { id?: string; timestamp?: string },
): Record<string, unknown>;
export function expectedEvent(
  type: 'plant.deleted',
  plant: { id: Id },
  event?: { id?: string; timestamp?: string },
): Record<string, unknown>;
export function expectedEvent(
  type: string,
  plant: PlantFields | { id: Id },
  event: { id?: string; timestamp?: string } = {},
): Record<string, unknown> {
  const data = expectedEventData(type as 'plant.created', plant as PlantFields);
  return bodyOf('Event', { id: expect.stringMatching(/^evt_[1-9]\d*$/), type, data, ...event });
}
