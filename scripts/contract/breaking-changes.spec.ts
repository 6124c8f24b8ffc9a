import { Document, breakingChanges } from './breaking-changes';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a document changed by path
type Change = (document: any) => void;

/**
 * A small document shaped as openapi.json is: a request body and a query parameter with bounds, and
 * a webhook whose payload refers to its data through `allOf`, then `change`d.
 */
function document(change: Change = () => {}): Document {
  const json = (ref: string) => ({
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
  });
  const built = {
    paths: {
      '/plants': {
        post: { requestBody: json('NewPlant') },
        get: { parameters: [{ in: 'query', name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000 } }] },
      },
    },
    'x-webhooks': { 'plant.created': { post: { requestBody: json('PlantCreatedEvent') } } },
    components: {
      schemas: {
        NewPlant: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 255 },
            tag: { type: 'string' },
            count: { type: 'integer', minimum: 0 },
            color: { type: 'string', enum: ['red', 'green'] },
            events: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 2 },
          },
          required: ['name'],
        },
        PlantCreatedEventData: {
          type: 'object',
          properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' }, tag: { type: 'string' } },
          required: ['id', 'name'],
        },
        PlantCreatedEvent: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['plant.created'] },
            data: { description: 'The plant', allOf: [{ $ref: '#/components/schemas/PlantCreatedEventData' }] },
          },
          required: ['type', 'data'],
        },
      },
    },
  };
  change(built);
  return built as Document;
}

interface Case {
  /** The released document's change from the base, if any; the current one is the base `after` changes. */
  before?: Change;
  after: Change;
  breaks: string[];
  /** What the same pair read the other way finds: by default nothing, as it widens. */
  reversed?: string[];
}

const WEBHOOK_PAYLOADS: Record<string, Case> = {
  'an optional field removed': {
    after: (d) => delete d.components.schemas.PlantCreatedEventData.properties.tag,
    breaks: ['webhook plant.created, data: tag removed'],
  },
  'a required field removed': {
    after: (d) => {
      delete d.components.schemas.PlantCreatedEventData.properties.name;
      d.components.schemas.PlantCreatedEventData.required = ['id'];
    },
    breaks: ['webhook plant.created, data: name removed'],
  },
  'a required field made optional': {
    after: (d) => (d.components.schemas.PlantCreatedEventData.required = ['id']),
    breaks: ['webhook plant.created, data: name made optional'],
  },
  'a field given another type': {
    after: (d) => (d.components.schemas.PlantCreatedEventData.properties.id = { type: 'string' }),
    breaks: [
      'webhook plant.created, data.id: type integer became string',
      'webhook plant.created, data.id: format int64 became none',
    ],
    reversed: ['webhook plant.created, data.id: type string became integer'],
  },
  'a field made nullable': {
    after: (d) => (d.components.schemas.PlantCreatedEventData.properties.name.nullable = true),
    breaks: ['webhook plant.created, data.name: may now be null'],
  },
  'a value added to an enumeration': {
    after: (d) => d.components.schemas.PlantCreatedEvent.properties.type.enum.push('plant.updated'),
    breaks: ['webhook plant.created, type: may now be "plant.updated"'],
  },
  'an event no longer sent': {
    after: (d) => delete d['x-webhooks']['plant.created'],
    breaks: ['webhook plant.created: no longer sent'],
  },
};

const REQUEST_BOUNDS: Record<string, Case> = {
  'a maxLength lowered': {
    after: (d) => (d.components.schemas.NewPlant.properties.name.maxLength = 200),
    breaks: ['POST /plants request body, name: maxLength 255 became 200'],
  },
  'a maxLength added': {
    after: (d) => (d.components.schemas.NewPlant.properties.tag.maxLength = 50),
    breaks: ['POST /plants request body, tag: maxLength 50 added'],
  },
  'a minLength raised': {
    after: (d) => (d.components.schemas.NewPlant.properties.name.minLength = 2),
    breaks: ['POST /plants request body, name: minLength 1 became 2'],
  },
  'a minimum raised on a parameter': {
    after: (d) => (d.paths['/plants'].get.parameters[0].schema.minimum = 2),
    breaks: ['GET /plants query parameter limit: minimum 1 became 2'],
  },
  'a maximum lowered on a parameter': {
    after: (d) => (d.paths['/plants'].get.parameters[0].schema.maximum = 500),
    breaks: ['GET /plants query parameter limit: maximum 1000 became 500'],
  },
  'an exclusive minimum added (OpenAPI 3.0)': {
    after: (d) => (d.components.schemas.NewPlant.properties.count.exclusiveMinimum = true),
    breaks: ['POST /plants request body, count: exclusiveMinimum added'],
  },
  'an enumeration narrowed': {
    after: (d) => (d.components.schemas.NewPlant.properties.color.enum = ['red']),
    breaks: ['POST /plants request body, color: no longer takes "green"'],
  },
  "an array's items narrowed": {
    after: (d) => (d.components.schemas.NewPlant.properties.events.items.enum = ['a']),
    breaks: ['POST /plants request body, events[]: no longer takes "b"'],
  },
  'a maxItems lowered': {
    after: (d) => (d.components.schemas.NewPlant.properties.events.maxItems = 1),
    breaks: ['POST /plants request body, events: maxItems 2 became 1'],
  },
  'a pattern added': {
    after: (d) => (d.components.schemas.NewPlant.properties.name.pattern = '^[a-z]+$'),
    breaks: ['POST /plants request body, name: pattern ^[a-z]+$ added'],
  },
  'an enumeration added': {
    after: (d) => (d.components.schemas.NewPlant.properties.tag.enum = ['green']),
    breaks: ['POST /plants request body, tag: enum "green" added'],
  },
  'a format added': {
    after: (d) => (d.components.schemas.NewPlant.properties.tag.format = 'uuid'),
    breaks: ['POST /plants request body, tag: format uuid added'],
  },
  'null no longer taken': {
    before: (d) => (d.components.schemas.NewPlant.properties.tag.nullable = true),
    after: () => {},
    breaks: ['POST /plants request body, tag: no longer takes null'],
  },
  'an optional field removed': {
    after: (d) => delete d.components.schemas.NewPlant.properties.tag,
    breaks: ['POST /plants request body: tag removed (the service refuses a field it does not know)'],
  },
};

describe(breakingChanges.name, () => {
  it('finds nothing between a document and itself, or a change of descriptions', () => {
    expect(breakingChanges(document(), document())).toEqual([]);
    const described = document((d) => {
      d.components.schemas.NewPlant.properties.name.description = 'What the plant is called';
      d.components.schemas.PlantCreatedEventData.properties.name.description = 'Its name';
    });
    expect(breakingChanges(document(), described)).toEqual([]);
  });

  describe.each([
    ['in a webhook payload', WEBHOOK_PAYLOADS],
    ['in what a request may send', REQUEST_BOUNDS],
  ])('%s', (_where, cases) => {
    it.each(Object.entries(cases))('breaks on %s, not on the change the other way', (_case, pair) => {
      const [before, after] = [document(pair.before), document(pair.after)];
      expect(breakingChanges(before, after)).toEqual(pair.breaks);
      expect(breakingChanges(after, before)).toEqual(pair.reversed ?? []);
    });
  });

  it("reads OpenAPI 3.1's webhooks as it reads x-webhooks", () => {
    const asWebhooks: Change = (d) => {
      d.webhooks = d['x-webhooks'];
      delete d['x-webhooks'];
    };
    const removed = document((d) => {
      asWebhooks(d);
      delete d.components.schemas.PlantCreatedEventData.properties.tag;
    });
    expect(breakingChanges(document(asWebhooks), removed)).toEqual(['webhook plant.created, data: tag removed']);
  });

  it('compares a schema that refers to itself once along each path', () => {
    const nested: Change = (d) => {
      d.components.schemas.PlantCreatedEventData.properties.parent = {
        $ref: '#/components/schemas/PlantCreatedEventData',
      };
    };
    const removed = document((d) => {
      nested(d);
      delete d.components.schemas.PlantCreatedEventData.properties.tag;
    });
    expect(breakingChanges(document(nested), removed)).toEqual([
      'webhook plant.created, data: tag removed',
      'webhook plant.created, data.parent: tag removed',
    ]);
  });
});
