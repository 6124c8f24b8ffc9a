import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The text of src/answers.ts: the body of each operation's success as the client checks it
 * (src/shapes.ts, readChecked), written from openapi.json as src/schema.ts is. A property the
 * service adds to an answer reaches the client's checks with `npm run generate`, and no one writes
 * it again by hand.
 */

interface PropertySchema {
  type?: string;
  format?: string;
  nullable?: boolean;
  items?: PropertySchema;
  $ref?: string;
  allOf?: unknown[];
  anyOf?: unknown[];
  oneOf?: unknown[];
}

interface ObjectSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

interface Document {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, Response> }>>;
  components: { schemas: Record<string, ObjectSchema> };
}

interface Response {
  content?: Record<string, { schema?: { $ref?: string; type?: string; items?: { $ref?: string } } }>;
}

/** Paths whose answers no client of the API reads: the health probes are for orchestrators. */
const NOT_FOR_CLIENTS = /^\/health\//;

const HEADER =
  '// Generated from openapi.json by `npm run generate -w clients/typescript`: do not edit.\n' +
  '// src/schema.spec.ts fails when this file is stale.\n\n';

/** The client's name for the JSON type of a property (src/shapes.ts checks each name), `?` when it may be absent. */
export function kindOf(property: PropertySchema, where: string): string {
  if (property.nullable) throw new Error(`${where} may be null, which the client's checks do not know`);
  if (property.$ref !== undefined || property.allOf || property.anyOf || property.oneOf) return 'object';
  switch (property.type) {
    case 'integer':
      return property.format === 'int64' ? 'int64' : 'number';
    case 'number':
    case 'string':
    case 'boolean':
    case 'object':
      return property.type;
    case 'array':
      if (property.items?.type === 'string') return 'string[]';
      break;
  }
  throw new Error(`${where} is of a type the client's checks do not know: ${JSON.stringify(property)}`);
}

/** `WebhookAttempt` → `WEBHOOK_ATTEMPT`. */
const constantName = (schema: string) => schema.replace(/(?<=[a-z0-9])(?=[A-Z])/g, '_').toUpperCase();

/** The success of an operation with a JSON body: its schema, and whether the body is an array of it. */
function answerOf(response: Response | undefined): { schema: string; list: boolean } | undefined {
  const schema = response?.content?.['application/json']?.schema;
  if (schema === undefined) return undefined;
  const ref = schema.type === 'array' ? schema.items?.$ref : schema.$ref;
  if (ref === undefined) throw new Error(`an answer that is not a schema of the document: ${JSON.stringify(schema)}`);
  return { schema: ref.split('/').pop()!, list: schema.type === 'array' };
}

export function generateAnswers(document: Document): string {
  const answers: { operationId: string; schema: string; list: boolean }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (NOT_FOR_CLIENTS.test(path)) continue;
    for (const operation of Object.values(item)) {
      const successes = Object.entries(operation.responses ?? {}).filter(([status]) => /^2/.test(status));
      const answer = successes.length === 1 ? answerOf(successes[0][1]) : undefined;
      if (answer !== undefined) answers.push({ operationId: operation.operationId!, ...answer });
    }
  }
  const schemas = [...new Set(answers.map(({ schema }) => schema))];
  const shapes = schemas.map((name) => {
    const schema = document.components.schemas[name];
    const properties = Object.entries(schema.properties ?? {}).map(([property, declared]) => {
      const optional = schema.required?.includes(property) ? '' : '?';
      return `  ${property}: '${kindOf(declared, `${name}.${property}`)}${optional}',`;
    });
    return `const ${constantName(name)}: Shape<Schemas['${name}']> = {\n${properties.join('\n')}\n};\n`;
  });
  const entries = answers.map(
    ({ operationId, schema, list }) =>
      `  ${operationId}: ${list ? 'many' : 'one'}<Schemas['${schema}']>('${schema}', ${constantName(schema)}),`,
  );
  return (
    HEADER +
    "import type { components, operations } from './schema';\n" +
    "import { type Expected, type Shape, many, one } from './shapes';\n\n" +
    "type Schemas = components['schemas'];\n\n" +
    '// Every property of each answer schema with its JSON type, `?` when it may be absent.\n\n' +
    shapes.join('\n') +
    "\n/** The body of each operation's success, by operationId: the operations with a JSON answer. */\n" +
    `export const ANSWERS = {\n${entries.join('\n')}\n} satisfies Partial<Record<keyof operations, Expected<unknown>>>;\n`
  );
}

export const ANSWERS_PATH = join(__dirname, '..', 'src', 'answers.ts');

/** The text of src/answers.ts for the committed openapi.json. */
export function answersText(): string {
  return generateAnswers(JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')));
}
