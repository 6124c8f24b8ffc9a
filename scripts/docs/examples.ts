import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toExactJson } from '../../src/common/json/exact-json';
import { eventChoice } from '../../src/webhooks/dto/webhook-event.dto';
import { WEBHOOK_EVENTS, WEBHOOK_EVENT_TYPES, deliveryBody, eventSchemaName } from '../../src/webhooks/events/events';
import { Fact, Facts, markdownTable } from './fragments';

/** The parts of a schema of the committed OpenAPI document an example is made of. */
interface Schema {
  properties?: Record<string, Schema>;
  required?: string[];
  example?: unknown;
  $ref?: string;
  allOf?: Schema[];
}

type Schemas = Record<string, Schema>;

export function schemasOf(root: string): Schemas {
  return (JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as { components: { schemas: Schemas } })
    .components.schemas;
}

/** What an example shows besides the schema's own examples. */
export interface ExampleOptions {
  /** Optional properties the example leaves out (one that would say something else than the example does). */
  leaveOut?: readonly string[];
  /** Values in place of the declared examples: the same resource across a page, an id beyond 2^53. */
  values?: Readonly<Record<string, unknown>>;
}

/**
 * A body of the schema `name`, from the examples its properties declare in openapi.json (in the
 * DTOs' `@ApiProperty`): every property with an example, one of another schema as that schema's
 * example, in the schema's order. A property the schema requires that has no example fails, naming
 * it, so a field added to a resource reaches the docs' examples of it, or says it cannot.
 */
export function exampleOf(schemas: Schemas, name: string, options: ExampleOptions = {}): Record<string, unknown> {
  const schema = schemas[name];
  if (schema?.properties === undefined) throw new Error(`openapi.json has no object schema ${name}`);
  const { leaveOut = [], values = {} } = options;
  for (const property of [...leaveOut, ...Object.keys(values)]) {
    if (!Object.hasOwn(schema.properties, property)) throw new Error(`${name} declares no ${property}`);
  }
  const example: Record<string, unknown> = {};
  for (const [property, declared] of Object.entries(schema.properties)) {
    const required = schema.required?.includes(property) ?? false;
    if (leaveOut.includes(property)) {
      if (required) throw new Error(`${name}.${property} is required: an example cannot leave it out`);
      continue;
    }
    const ref = declared.$ref ?? declared.allOf?.[0]?.$ref;
    const value = Object.hasOwn(values, property)
      ? values[property]
      : ref !== undefined
        ? exampleOf(schemas, ref.split('/').pop()!)
        : declared.example;
    if (value !== undefined) example[property] = value;
    else if (required) throw new Error(`${name}.${property} declares no example, which the docs' examples need`);
  }
  return example;
}

const PRINT_WIDTH = 120;

/** A JSON value on one line, as Prettier writes one that fits: `{ "id": 7 }`, `["a", "b"]`; int64 exact. */
function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value).map(([key, member]) => `${JSON.stringify(key)}: ${inline(member)}`);
    return members.length === 0 ? '{}' : `{ ${members.join(', ')} }`;
  }
  return toExactJson(value)!;
}

/**
 * JSON text as Prettier writes it in a Markdown code block, so that `npm run docs` (which formats
 * what it wrote) leaves it as the fact has it: the outermost object one member per line, and so
 * each object of an outermost array; any other value on one line when it fits the print width,
 * else one member per line.
 */
export function prettyJson(value: unknown, indent = '', expand = true, tail = ''): string {
  const isObject = typeof value === 'object' && value !== null;
  if (!isObject) return inline(value);
  const oneLine = inline(value);
  if (!expand && indent.length + oneLine.length + tail.length <= PRINT_WIDTH) return oneLine;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value.map((item, i) => {
      const comma = i < value.length - 1 ? ',' : '';
      return `${inner}${prettyJson(item, inner, indent === '', comma)}${comma}`;
    });
    return items.length === 0 ? '[]' : `[\n${items.join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value);
  const members = entries.map(([key, member], i) => {
    const head = `${inner}${JSON.stringify(key)}: `;
    const comma = i < entries.length - 1 ? ',' : '';
    return `${head}${prettyJson(member, inner, false, `${head.slice(inner.length)}${comma}`)}${comma}`;
  });
  return members.length === 0 ? '{}' : `{\n${members.join('\n')}\n${indent}}`;
}

/** A block fact: the value as a ```json code block. */
function jsonBlock(value: unknown): Fact {
  return { block: true, text: `\`\`\`json\n${prettyJson(value)}\n\`\`\`` };
}

/** `{id, name, tag}`: the properties of a schema, as the docs' prose names a body's fields. */
function fieldsOf(schemas: Schemas, name: string): Fact {
  return { text: `\`{${Object.keys(schemas[name].properties ?? {}).join(', ')}}\`` };
}

/**
 * The event types a subscription chooses from, as the docs name them (`` `plant.created` and
 * `plant.deleted` ``), and the table of what each fires on and carries: from their declarations
 * (src/webhooks/events/events.ts), so a new type reaches the docs with `npm run docs`.
 */
function eventFacts(schemas: Schemas): Facts {
  const quote = (name: string) => `\`${name}\``;
  const rows = WEBHOOK_EVENTS.map((type) => {
    const declared = WEBHOOK_EVENT_TYPES[type] as { summary: string; dataDescription?: string };
    const data = schemas[`${eventSchemaName(type)}Data`];
    const fields = `\`{${Object.keys(data?.properties ?? {}).join(', ')}}\``;
    const { dataDescription: about } = declared;
    const described = about === undefined ? '' : `: ${about[0].toLowerCase()}${about.slice(1)}`;
    return [quote(type), declared.summary, `${fields}${described}`];
  });
  return {
    'event-types': { text: eventChoice(quote) },
    'table:events': { block: true, text: markdownTable(['`type`', 'fires when', '`data`'], rows) },
  };
}

/** A plant id beyond 2^53, which JavaScript's JSON.parse would round: the docs show ids exact. */
const BEYOND_2_53 = 9_007_199_254_740_993n;
/** The subscription docs/webhooks.md makes, to both events, and then names in its commands. */
const SUBSCRIPTION = { id: 3_291_850_417_782_633, events: ['plant.created', 'plant.deleted'] };

/**
 * The example bodies the docs show, each from the examples the DTOs declare (openapi.json), so a
 * field added to a resource shows in them with `npm run docs`.
 */
export function exampleFacts(schemas: Schemas): Facts {
  const created = exampleOf(schemas, 'PlantCreatedEvent', {
    values: { data: exampleOf(schemas, 'PlantCreatedEventData', { values: { id: BEYOND_2_53 } }) },
  });
  const deleted = exampleOf(schemas, 'PlantDeletedEvent', {
    values: { data: exampleOf(schemas, 'PlantDeletedEventData', { values: { id: BEYOND_2_53 } }) },
  });
  const eventId = schemas.Event.properties!.id.example as string;
  const listed = (body: Record<string, unknown>, id: string) =>
    exampleOf(schemas, 'Event', { values: { ...body, id } });
  const delivered = (body: Record<string, unknown>) =>
    deliveryBody(body.type as never, Date.parse(body.timestamp as string), toExactJson(body.data)!);
  return {
    ...eventFacts(schemas),
    'example:plant': jsonBlock(exampleOf(schemas, 'Plant')),
    'fields:plant': fieldsOf(schemas, 'Plant'),
    'example:created-webhook': jsonBlock(
      exampleOf(schemas, 'CreatedWebhook', {
        leaveOut: ['disabledReason', 'previousSecretExpiresAt'],
        values: SUBSCRIPTION,
      }),
    ),
    // Rotated at 09:31 with the page's `"gracePeriodSeconds": 3600`.
    'example:rotated-webhook': jsonBlock(
      exampleOf(schemas, 'RotatedWebhook', {
        leaveOut: ['description', 'disabledReason'],
        values: { ...SUBSCRIPTION, previousSecretExpiresAt: '2026-11-24T10:31:00.000Z' },
      }),
    ),
    // GET /events, newest first: the plant's deletion after its creation.
    'example:events': jsonBlock([
      listed(deleted, `evt_${Number(eventId.slice('evt_'.length)) + 1}`),
      listed(created, eventId),
    ]),
    'example:deliveries': { block: true, text: `\`\`\`jsonl\n${delivered(created)}\n${delivered(deleted)}\n\`\`\`` },
  };
}
