/**
 * The breaking changes `npm run contract:check` finds itself, beside Optic's rules, which read only
 * `paths` and, there, not a request's bounds (docs/api.md, "Versioning"):
 *
 * - a webhook's payload (`x-webhooks`, or OpenAPI 3.1's `webhooks`) is what the service sends and a
 *   receiver reads, as an answer is: an event no longer sent, a field removed, made optional, given
 *   another type or format, made nullable, or an enumeration given a value breaks it;
 * - a request body's or a parameter's schema is what a client sends: a bound narrowed (a `maxLength`,
 *   `maxItems` or `maximum` lowered or added, a `min...` raised or added, an exclusive bound added), a
 *   `pattern`, a `format` or `multipleOf` added or changed, an enumeration added or a value taken out,
 *   `uniqueItems`, `nullable` taken away, `additionalProperties: false`, or a field removed (the service
 *   refuses a field it does not know) breaks it.
 *
 * Widening is no break: a field added to a payload, a bound relaxed, a value added to a request's
 * enumeration. Each break is one line: `POST /plants request body, name: maxLength 255 became 200`.
 */

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
  pattern?: string;
  multipleOf?: number;
  uniqueItems?: boolean;
  exclusiveMinimum?: boolean | number;
  exclusiveMaximum?: boolean | number;
  [bound: string]: unknown;
}

interface MediaTypes {
  content?: Record<string, { schema?: Schema }>;
}

interface Operation {
  parameters?: ({ in: string; name: string; schema?: Schema } | { $ref: string })[];
  requestBody?: MediaTypes | { $ref: string };
}

export interface Document {
  paths?: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  'x-webhooks'?: Record<string, Record<string, Operation>>;
  components?: Record<string, Record<string, unknown> | undefined>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const UPPER_BOUNDS = ['maxLength', 'maxItems', 'maxProperties', 'maximum'];
const LOWER_BOUNDS = ['minLength', 'minItems', 'minProperties', 'minimum'];

/** Every break the two rules below find between the released document and the current one. */
export function breakingChanges(before: Document, after: Document): string[] {
  return [...webhookPayloadBreaks(before, after), ...requestBoundBreaks(before, after)];
}

/** What a receiver of a webhook written for `before` could no longer read in `after`. */
export function webhookPayloadBreaks(before: Document, after: Document): string[] {
  const [was, now] = [webhooksOf(before), webhooksOf(after)];
  return Object.entries(was).flatMap(([event, item]) =>
    METHODS.filter((method) => item[method]).flatMap((method) => {
      const operation = now[event]?.[method];
      if (!operation) return [`webhook ${event}: no longer sent`];
      return mediaTypePairs(before, item[method], after, operation).flatMap(([b, a]) =>
        compare(before, b, after, a, `webhook ${event}`, sentChanges),
      );
    }),
  );
}

/** What a client written for `before` may send that `after` refuses. */
export function requestBoundBreaks(before: Document, after: Document): string[] {
  return Object.entries(before.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] && after.paths?.[path]?.[method]).flatMap((method) => {
      const [b, a] = [item[method], after.paths![path][method]];
      const where = `${method.toUpperCase()} ${path}`;
      const body = mediaTypePairs(before, b, after, a).flatMap(([bs, as]) =>
        compare(before, bs, after, as, `${where} request body`, acceptedChanges),
      );
      const parameters = parametersOf(before, b).flatMap((parameter) => {
        const counterpart = parametersOf(after, a).find((p) => p.in === parameter.in && p.name === parameter.name);
        if (!counterpart?.schema || !parameter.schema) return [];
        const at = `${where} ${parameter.in} parameter ${parameter.name}`;
        return compare(before, parameter.schema, after, counterpart.schema, at, acceptedChanges);
      });
      return [...body, ...parameters];
    }),
  );
}

type Rule = (before: Schema, after: Schema) => string[];

/** What a receiver of the value would no longer read. */
const sentChanges: Rule = (b, a) => [
  ...(b.type !== undefined && a.type !== b.type ? [`type ${b.type} became ${a.type ?? 'any'}`] : []),
  ...(b.format !== undefined && a.format !== b.format ? [`format ${b.format} became ${a.format ?? 'none'}`] : []),
  ...(a.nullable && !b.nullable ? ['may now be null'] : []),
  ...(b.enum && (!a.enum || a.enum.some((value) => !b.enum!.includes(value)))
    ? [`may now be ${a.enum ? valuesOf(a.enum.filter((value) => !b.enum!.includes(value))) : 'any value'}`]
    : []),
  ...Object.keys(b.properties ?? {}).flatMap((name) =>
    !a.properties?.[name]
      ? [`${name} removed`]
      : b.required?.includes(name) && !a.required?.includes(name)
        ? [`${name} made optional`]
        : [],
  ),
];

/** What a client may have sent that the value no longer accepts. */
const acceptedChanges: Rule = (b, a) => [
  ...UPPER_BOUNDS.filter((key) => isNumber(a[key]) && (!isNumber(b[key]) || a[key] < b[key])).map((key) =>
    bound(key, b[key], a[key]),
  ),
  ...LOWER_BOUNDS.filter((key) => isNumber(a[key]) && (!isNumber(b[key]) || a[key] > b[key])).map((key) =>
    bound(key, b[key], a[key]),
  ),
  ...exclusive('exclusiveMaximum', b.exclusiveMaximum, a.exclusiveMaximum, (was, now) => now < was),
  ...exclusive('exclusiveMinimum', b.exclusiveMinimum, a.exclusiveMinimum, (was, now) => now > was),
  ...(['pattern', 'format', 'multipleOf'] as const)
    .filter((key) => a[key] !== undefined && a[key] !== b[key])
    .map((key) => bound(key, b[key], a[key])),
  ...(a.enum && !b.enum ? [`enum ${valuesOf(a.enum)} added`] : []),
  ...(a.enum && b.enum?.some((value) => !a.enum!.includes(value))
    ? [`no longer takes ${valuesOf(b.enum.filter((value) => !a.enum!.includes(value)))}`]
    : []),
  ...(a.uniqueItems && !b.uniqueItems ? ['uniqueItems added'] : []),
  ...(b.nullable && !a.nullable ? ['no longer takes null'] : []),
  ...(a.additionalProperties === false && b.additionalProperties !== false
    ? ['additionalProperties: false added']
    : []),
  ...Object.keys(b.properties ?? {})
    .filter((name) => !a.properties?.[name])
    .map((name) => `${name} removed (the service refuses a field it does not know)`),
];

/**
 * `rule` on the two schemas, then on each property and the items both have: every finding as
 * `<where>, <place>: <what>`, the place written as the JSON it describes (`data.name`, `events[]`).
 */
function compare(
  before: Document,
  b: Schema,
  after: Document,
  a: Schema,
  where: string,
  rule: Rule,
  place = '',
  seen: ReadonlySet<string> = new Set(),
): string[] {
  // A schema that refers to itself is compared once along each path.
  const refs = [b.$ref, a.$ref].filter((ref) => ref !== undefined).join(' ');
  if (refs && seen.has(refs)) return [];
  const inner = refs ? new Set([...seen, refs]) : seen;
  const [was, now] = [flat(before, b), flat(after, a)];
  const here = rule(was, now).map((finding) => `${where}${place ? `, ${place}` : ''}: ${finding}`);
  const properties = Object.entries(was.properties ?? {}).flatMap(([name, property]) =>
    now.properties?.[name]
      ? compare(before, property, after, now.properties[name], where, rule, place ? `${place}.${name}` : name, inner)
      : [],
  );
  const items =
    was.items && now.items ? compare(before, was.items, after, now.items, where, rule, `${place}[]`, inner) : [];
  return [...here, ...properties, ...items];
}

/** The schema with its `$ref` followed and its `allOf` parts merged into one object. */
export function flat(document: Document, schema: Schema, depth = 0): Schema {
  if (depth > 32) throw new Error(`$ref too deep at ${schema.$ref}`);
  if (schema.$ref)
    return flat(document, { ...resolve<Schema>(document, schema.$ref), ...withoutRef(schema) }, depth + 1);
  if (!schema.allOf) return schema;
  const { allOf, ...own } = schema;
  return allOf
    .map((part) => flat(document, part, depth + 1))
    .reduce<Schema>(
      (merged, part) => ({
        ...part,
        ...merged,
        properties: { ...part.properties, ...merged.properties },
        required: [...(merged.required ?? []), ...(part.required ?? [])],
      }),
      own,
    );
}

function withoutRef(schema: Schema): Schema {
  const rest = { ...schema };
  delete rest.$ref;
  return rest;
}

function resolve<T>(document: Document, ref: string): T {
  const found = ref
    .replace(/^#\//, '')
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], document);
  if (found === undefined) throw new Error(`${ref} is not in the document`);
  return found as T;
}

function webhooksOf(document: Document): Record<string, Record<string, Operation>> {
  return { ...document.webhooks, ...document['x-webhooks'] };
}

/** The request body schemas of both operations, for each media type both have. */
function mediaTypePairs(before: Document, b: Operation, after: Document, a: Operation): [Schema, Schema][] {
  const bodyOf = (document: Document, operation: Operation): MediaTypes | undefined =>
    operation.requestBody && '$ref' in operation.requestBody
      ? resolve<MediaTypes>(document, operation.requestBody.$ref)
      : operation.requestBody;
  const [was, now] = [bodyOf(before, b)?.content ?? {}, bodyOf(after, a)?.content ?? {}];
  return Object.entries(was).flatMap(([type, media]): [Schema, Schema][] =>
    media.schema && now[type]?.schema ? [[media.schema, now[type].schema]] : [],
  );
}

function parametersOf(document: Document, operation: Operation): { in: string; name: string; schema?: Schema }[] {
  return (operation.parameters ?? []).map((parameter) =>
    '$ref' in parameter ? resolve<{ in: string; name: string; schema?: Schema }>(document, parameter.$ref) : parameter,
  );
}

const isNumber = (value: unknown): value is number => typeof value === 'number';

const bound = (key: string, was: unknown, now: unknown) =>
  was === undefined ? `${key} ${String(now)} added` : `${key} ${String(was)} became ${String(now)}`;

/** An exclusive bound: OpenAPI 3.0's flag on the inclusive one, or 3.1's number. */
function exclusive(
  key: string,
  was: boolean | number | undefined,
  now: boolean | number | undefined,
  narrower: (was: number, now: number) => boolean,
): string[] {
  if (now === true && was !== true) return [`${key} added`];
  if (isNumber(now) && (!isNumber(was) || narrower(was, now))) return [bound(key, was, now)];
  return [];
}

const valuesOf = (values: unknown[]) => values.map((value) => JSON.stringify(value)).join(', ');
