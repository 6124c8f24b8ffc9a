import { ApiProperty, ApiSchema, PickType } from '@nestjs/swagger';
import { toExactJson } from '../../common/json/exact-json';
import { PlantDto } from '../../plants/dto/plant.dto';

/**
 * The webhook events, declared once: their names, when they fire, what a receiver gets, and how
 * the OpenAPI document shows them. Everything else (the accepted `events` of a subscription, the
 * recording of a delivery in the plant's own transaction, the body sent, the document's
 * `x-webhooks` and schemas) is derived from WEBHOOK_EVENT_TYPES. Adding an event: a `data` schema
 * class (derived from the plant's DTO), an entry below, docs/webhooks.md and the tests.
 */

/** The `data` of plant.created: the plant as created, as the API returns it. */
@ApiSchema({ name: 'PlantCreatedEventData' })
class CreatedPlantData extends PlantDto {}

/** The `data` of plant.deleted: the plant's id (the statement deletes by id and reads nothing). */
@ApiSchema({ name: 'PlantDeletedEventData' })
class DeletedPlantData extends PickType(PlantDto, ['id'] as const) {}

/** The plant changes an event can fire on, with what the service knows of the plant at that moment. */
export interface PlantChanges {
  /** A plant was inserted: as the API returns it. */
  created: CreatedPlantData;
  /** A plant was deleted: its id. */
  deleted: DeletedPlantData;
}
export type PlantChange = keyof PlantChanges;

interface EventDeclaration<Change extends PlantChange> {
  /** The change that records the event, for every subscription of the plant's owner that wants it. */
  on: Change;
  /** One line for people: the summary of the event in the OpenAPI document. */
  summary: string;
  /** The schema of the body's `data`, and what the document says of that field. */
  dataSchema: new () => object;
  dataDescription?: string;
  /** The body's `data`, from the plant as the change left it. */
  data(plant: PlantChanges[Change]): object;
  /** An example `timestamp` for the document. */
  exampleTimestamp: string;
}

const declare = <Change extends PlantChange>(declaration: EventDeclaration<Change>) => declaration;

export const WEBHOOK_EVENT_TYPES = {
  'plant.created': declare({
    on: 'created',
    summary: 'A plant of the user was created',
    dataSchema: CreatedPlantData,
    dataDescription: 'The plant as created, as the API returns it (Plant)',
    data: (plant) => plant,
    exampleTimestamp: '2026-11-24T09:30:00.123Z',
  }),
  'plant.deleted': declare({
    on: 'deleted',
    summary: 'A plant of the user was deleted',
    dataSchema: DeletedPlantData,
    data: (plant) => ({ id: plant.id }),
    exampleTimestamp: '2026-11-24T09:31:00.456Z',
  }),
};

export type WebhookEvent = keyof typeof WEBHOOK_EVENT_TYPES;
export const WEBHOOK_EVENTS = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEvent[];

export function isWebhookEvent(value: string): value is WebhookEvent {
  return Object.hasOwn(WEBHOOK_EVENT_TYPES, value);
}

/** The events a change records, each with its `data` as exact JSON (ids stay exact int64). */
export function eventsOf<Change extends PlantChange>(
  change: Change,
  plant: PlantChanges[Change],
): { type: WebhookEvent; data: string }[] {
  const recorded: { type: WebhookEvent; data: string }[] = [];
  for (const type of WEBHOOK_EVENTS) {
    const declaration = WEBHOOK_EVENT_TYPES[type] as EventDeclaration<PlantChange>;
    if (declaration.on === change) recorded.push({ type, data: toExactJson(declaration.data(plant))! });
  }
  return recorded;
}

const TYPES_ON: Record<PlantChange, readonly WebhookEvent[]> = {
  created: WEBHOOK_EVENTS.filter((type) => WEBHOOK_EVENT_TYPES[type].on === 'created'),
  deleted: WEBHOOK_EVENTS.filter((type) => WEBHOOK_EVENT_TYPES[type].on === 'deleted'),
};

/**
 * The event types fired by `change`: a plant write needs no event recorded when no subscription
 * wants any. The same array for every call, as it is read on every create and delete.
 */
export function eventTypesOn(change: PlantChange): readonly WebhookEvent[] {
  return TYPES_ON[change];
}

/**
 * The body POSTed to a receiver: `{type, timestamp, data}`, `data` as recorded with the change.
 * Written out rather than stringified: the recorded `data` is already exact JSON.
 */
export function deliveryBody(type: WebhookEvent, occurredAt: number, data: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":"${new Date(occurredAt).toISOString()}","data":${data}}`;
}

@ApiSchema({ name: 'WebhookTestEventData' })
export class TestEventData {
  @ApiProperty({
    description: 'What the event is for: nothing changed, and nothing is to be done',
    example: 'A test of this endpoint, sent through POST /webhooks/{id}/test',
  })
  message: string;
}

/** The `data` of a test event. */
export const TEST_EVENT_MESSAGE = 'A test of this endpoint, sent through POST /webhooks/{id}/test';

/**
 * The event `POST /webhooks/{id}/test` sends: no subscription asks for it (it is not among the
 * `events` one chooses), no plant change records it, and GET /events never lists it.
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** The body of a test: `{type, timestamp, data: {message}}`, as a delivery's. */
export function testEventBody(at: Date): string {
  return JSON.stringify({
    type: WEBHOOK_TEST_EVENT,
    timestamp: at.toISOString(),
    data: { message: TEST_EVENT_MESSAGE },
  });
}

/** `plant.created` → `plantCreated`: the event's operation id in the OpenAPI document. */
export function eventOperationId(type: WebhookEvent | typeof WEBHOOK_TEST_EVENT): string {
  return type.replace(/[._-](\w)/g, (_, letter: string) => letter.toUpperCase());
}

/** `plant.created` → `PlantCreatedEvent`: the schema name of the event's body. */
export function eventSchemaName(type: WebhookEvent | typeof WEBHOOK_TEST_EVENT): string {
  const id = eventOperationId(type);
  return `${id[0].toUpperCase()}${id.slice(1)}Event`;
}
