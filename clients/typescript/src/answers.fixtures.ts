import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'lossless-json';

/**
 * For the client's specs only (the package does not export it): the answers a fake service gives,
 * made from the schemas of the root openapi.json, as src/answers.ts is. A spec gives the values it
 * checks; every other property the schema requires takes the schema's example, so a field the
 * service adds reaches these answers with `npm run openapi`, and changes no spec.
 */

interface Schema {
  properties: Record<string, { format?: string; example?: unknown }>;
  required?: string[];
}

const SCHEMAS = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as {
    components: { schemas: Record<string, Schema> };
  }
).components.schemas;

/**
 * A body of `schema` as the client reads it (an int64 as a bigint): the values given, the schema's
 * example for every other property it requires. A value given as undefined is left out.
 */
export function answerOf(schema: string, given: Record<string, unknown>): Record<string, unknown> {
  const declared = SCHEMAS[schema];
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(declared.properties)) {
    if (Object.hasOwn(given, name)) {
      if (given[name] !== undefined) body[name] = given[name];
    } else if (declared.required?.includes(name)) {
      const example = property.example;
      body[name] = property.format === 'int64' && typeof example === 'number' ? BigInt(example) : example;
    }
  }
  return body;
}

/** The same body as the service writes it: JSON text, every int64 with all its digits. */
export function answerText(schema: string, given: Record<string, unknown>): string {
  return stringify(answerOf(schema, given)) as string;
}

type PlantGiven = { id?: bigint | number; name?: unknown; tag?: unknown };

/** A plant as the client yields it. */
export const plantOf = (plant: PlantGiven) => answerOf('Plant', plant);
/** A plant as the service answers it. */
export const plantText = (plant: PlantGiven) => answerText('Plant', plant);
/** A page of plants as the service answers it. */
export const plantsText = (...plants: PlantGiven[]) => `[${plants.map(plantText).join(',')}]`;
