import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answerOf, answerText, plantOf, plantText, plantsText } from './answers.fixtures';
import { PlantStoreError } from './errors';
import type { Answer } from './http';
import { ANSWERS } from './answers';
import { type Expected, readChecked } from './shapes';

const document = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8'));

const answer = (text: string): Answer => ({
  status: 200,
  headers: new Headers({ 'X-Request-Id': 'req-9' }),
  text,
  url: new URL('http://plants.test/plants'),
  attempts: 1,
});

function problem(text: string, expected: Expected<unknown>): PlantStoreError | undefined {
  try {
    readChecked(answer(text), expected);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(PlantStoreError);
    return error as PlantStoreError;
  }
}

/** The client's name for the JSON type of an OpenAPI property schema. */
function kindOf(schema: { type?: string; format?: string; items?: { type?: string }; anyOf?: unknown[] }): string {
  if (schema.type === 'integer' && schema.format === 'int64') return 'int64';
  // A choice among object schemas (an event's data): the client checks it is an object.
  if (schema.anyOf !== undefined) return 'object';
  if (schema.type === 'array' && schema.items?.type === 'string') return 'string[]';
  return String(schema.type);
}

describe('answer shapes', () => {
  describe('match openapi.json', () => {
    type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
    const operations = new Map<string, Operation & { path: string }>();
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, never>>)) {
      for (const operation of Object.values(methods) as (Operation & { operationId: string })[]) {
        operations.set(operation.operationId, { ...operation, path });
      }
    }

    it.each(Object.entries(ANSWERS))("%s: the client checks the body of the operation's success", (id, expected) => {
      const successes = Object.entries(operations.get(id)?.responses ?? {}).filter(([status]) => status < '300');
      expect(successes).toHaveLength(1);
      const schema = successes[0][1].content?.['application/json']?.schema;
      const ref = { $ref: `#/components/schemas/${expected.schema}` };
      expect(schema).toEqual(expected.list ? { type: 'array', items: ref } : ref);
    });

    it.each(Object.entries(ANSWERS))('%s: each documented property, required or not, of its type', (_id, expected) => {
      const schema = document.components.schemas[expected.schema];
      const documented = Object.fromEntries(
        Object.entries(schema.properties as Record<string, never>).map(([name, property]) => [
          name,
          kindOf(property) + ((schema.required as string[]).includes(name) ? '' : '?'),
        ]),
      );
      expect(expected.shape).toEqual(documented);
    });

    it('covers every JSON success of the operations the client calls', () => {
      // The health probes are for orchestrators, not a client of the API.
      const withBody = [...operations]
        .filter(([, op]) => !op.path.startsWith('/health/'))
        .filter(([, op]) => Object.entries(op.responses).some(([status, r]) => status < '300' && r.content))
        .map(([id]) => id);
      expect(new Set(Object.keys(ANSWERS))).toEqual(new Set(withBody));
    });
  });

  it('passes documented bodies, an optional property absent, and properties it does not know', () => {
    expect(readChecked(answer(plantText({ id: 7n, name: 'Fern' })), ANSWERS.createPlant)).toEqual(
      plantOf({ id: 7n, name: 'Fern' }),
    );
    const unknownToIt = { id: 7n, name: 'Fern', tag: 'x', color: 'green' };
    expect(readChecked(answer(`[${answerText('Plant', unknownToIt)}]`), ANSWERS.listPlants)).toEqual([
      answerOf('Plant', unknownToIt),
    ]);
    expect(readChecked(answer('[]'), ANSWERS.listWebhooks)).toEqual([]);
    const attempt =
      '{"eventId":"msg_1","type":"plant.created","attempt":1,"error":"timeout","attemptedAt":"2026-11-24T09:30:01.250Z","durationMs":10000}';
    expect(readChecked(answer(`[${attempt}]`), ANSWERS.listWebhookDeliveries)).toHaveLength(1);
  });

  it.each([
    ['[]', 'createPlant', 'the body is not a JSON object'],
    ['null', 'createPlant', 'the body is not a JSON object'],
    ['{"id":7}', 'createPlant', 'the body has no name'],
    ['{"id":"7","name":"Fern"}', 'createPlant', 'id of the body is not an int64'],
    ['{"id":7,"name":"Fern","tag":null}', 'createPlant', 'tag of the body is not a string'],
    ['{}', 'listWebhooks', 'the body is not a JSON array'],
    [plantsText({ id: 1n, name: 'a' }, { id: 2n, name: 3 }), 'listPlants', 'name of item 1 is not a string'],
    [`[${plantText({ id: 1n, name: 'a' })},7]`, 'listPlants', 'item 1 is not a JSON object'],
  ] as const)('refuses %s as the answer to %s: %s', (text, operation, message) => {
    expect(problem(text, ANSWERS[operation])).toMatchObject({
      kind: 'invalid-response',
      status: 200,
      requestId: 'req-9',
      message: `The answer to /plants is not what the API documents: ${message}`,
    });
  });

  it('names the property, never its value', () => {
    const created =
      '{"id":1,"url":"https://h.test/","events":["plant.created"],"createdAt":"x","enabled":"yes","secret":"whsec_secret"}';
    const failure = problem(created, ANSWERS.createWebhook);
    expect(failure?.message).toMatch(/enabled of the body is not a boolean$/);
    expect(failure?.message).not.toContain('whsec_secret');
    expect(problem(created.replace('"secret":"whsec_secret"', '"secret":7'), ANSWERS.createWebhook)?.message).toMatch(
      /enabled/,
    );
    expect(
      problem(
        created.replace('"enabled":"yes"', '"enabled":true').replace('"plant.created"', '1'),
        ANSWERS.createWebhook,
      )?.message,
    ).toMatch(/events of the body is not an array of strings$/);
  });
});
