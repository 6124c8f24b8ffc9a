import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlantFields, examplePlant, plantText } from '../../../test/utils/bodies';
import { PlantDto } from '../../plants/dto/plant.dto';
import {
  WEBHOOK_EVENTS,
  WEBHOOK_EVENT_TYPES,
  deliveryBody,
  eventOperationId,
  eventSchemaName,
  eventTypesOn,
  eventsOf,
} from './events';

const OCCURRED_AT = Date.UTC(2026, 10, 24, 9, 30, 0, 5);
const BEYOND_2_53 = 2n ** 53n + 1n;
const INT64_MAX = 2n ** 63n - 1n;

/** A created plant as the service hands it on: as the API shows it. */
const created = (plant: PlantFields) => examplePlant(plant) as unknown as PlantDto;

describe(eventsOf.name, () => {
  it('records plant.created on a create, with the plant as created, its id exact beyond 2^53', () => {
    const [event] = eventsOf('created', created({ id: BEYOND_2_53, name: 'Fern', tag: 'green' }));
    expect(event).toEqual({ type: 'plant.created', data: plantText({ id: BEYOND_2_53, name: 'Fern', tag: 'green' }) });
    expect(event.data).toContain('{"id":9007199254740993,');
  });

  it('leaves the tag out of a created plant that has none', () => {
    expect(eventsOf('created', created({ id: INT64_MAX, name: 'Fern' }))).toEqual([
      { type: 'plant.created', data: plantText({ id: INT64_MAX, name: 'Fern' }) },
    ]);
  });

  it('records plant.deleted on a delete, as the id only', () => {
    expect(eventsOf('deleted', { id: BEYOND_2_53 })).toEqual([
      { type: 'plant.deleted', data: '{"id":9007199254740993}' },
    ]);
  });

  it('knows which events each change fires', () => {
    expect(eventTypesOn('created')).toEqual(['plant.created']);
    expect(eventTypesOn('deleted')).toEqual(['plant.deleted']);
  });
});

describe(deliveryBody.name, () => {
  it('is {type, timestamp, data} with the recorded data as it is and the time in ISO form', () => {
    const data = plantText({ id: BEYOND_2_53, name: 'Fern', tag: 'green' });
    expect(deliveryBody('plant.created', OCCURRED_AT, data)).toBe(
      `{"type":"plant.created","timestamp":"2026-11-24T09:30:00.005Z","data":${data}}`,
    );
  });
});

describe('the data sent against the schema the document declares for it', () => {
  interface Schema {
    $ref?: string;
    allOf?: Schema[];
    type?: string;
    properties?: Record<string, Schema>;
    required?: string[];
    example?: unknown;
  }
  // The committed document, which test/openapi.e2e-spec.ts holds to what the service serves.
  const document = JSON.parse(readFileSync(join(__dirname, '../../../openapi.json'), 'utf8')) as {
    components: { schemas: Record<string, Schema> };
  };
  const resolve = (schema: Schema): Schema => {
    const ref = schema.$ref ?? schema.allOf?.[0]?.$ref;
    return ref ? resolve(document.components.schemas[ref.split('/').pop()!]) : schema;
  };
  // A plant with every field the API gives it set, from the examples of the Plant schema: a field
  // added to plants reaches this plant, and so the events that carry the plant.
  const plantSchema = document.components.schemas.Plant;
  const plant = Object.fromEntries(
    Object.entries(plantSchema.properties!).map(([name, field]) => [
      name,
      field.type === 'integer' ? BigInt(field.example as number) : field.example,
    ]),
  ) as unknown as PlantDto;

  it.each(WEBHOOK_EVENTS)('%s sends exactly the fields its data schema declares, of the declared types', (type) => {
    const [event] = eventsOf(WEBHOOK_EVENT_TYPES[type].on, plant).filter((recorded) => recorded.type === type);
    const data = JSON.parse(event.data) as Record<string, unknown>;
    const declared = resolve(resolve(document.components.schemas[eventSchemaName(type)]).properties!.data);
    expect(Object.keys(data).sort()).toEqual(Object.keys(declared.properties!).sort());
    for (const name of declared.required ?? []) expect(data).toHaveProperty(name);
    for (const [name, value] of Object.entries(data)) {
      const expected = declared.properties![name].type;
      expect([name, expected === 'integer' && Number.isInteger(value) ? 'integer' : typeof value]).toEqual([
        name,
        expected,
      ]);
    }
  });
});

describe('names in the OpenAPI document', () => {
  it('derives the operation id and the schema name from the event type', () => {
    expect(WEBHOOK_EVENTS.map(eventOperationId)).toEqual(['plantCreated', 'plantDeleted']);
    expect(WEBHOOK_EVENTS.map(eventSchemaName)).toEqual(['PlantCreatedEvent', 'PlantDeletedEvent']);
  });
});
