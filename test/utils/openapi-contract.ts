import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { readFileSync } from 'node:fs';
import { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { parse } from 'lossless-json';

/**
 * Every response the e2e test apps send is checked against the committed openapi.json.
 *
 * The document is read at run time (never hard-coded operations), so operations, statuses and headers
 * added to it are checked as soon as they are documented. The contract, for one response:
 * - the path matches a documented path template (a `{param}` is one path segment; its value must
 *   satisfy the parameter's schema, read from text, or the answer must not be a success);
 * - the method is documented for that path;
 * - the status is documented for that operation (exactly, as `4XX`, or through `default`);
 * - a body is present exactly when the response documents content, its Content-Type is documented,
 *   and a JSON body validates against the documented schema (integers are read exactly, so an
 *   int64 id is checked as the integer it is, never through a double);
 * - headers the response declares `required` are present, and every declared header that is present
 *   matches its schema.
 * Exempt: `/docs*` (Swagger UI and the JSON document). A path that is not in the document, or a
 * method a documented path does not have, must be 404 with the Error body (docs/api.md: unknown
 * routes and unsupported methods are 404), or 429 (the rate limit comes before routing); a path
 * with malformed percent-encoding may also be 400 (docs/api.md: "malformed ... percent-encoding"
 * is 400). Every error body also carries its own
 * status (`{"error": <status>}`, docs/api.md). Paths match as Express routes them: case-insensitive,
 * with an optional trailing slash. A successful CORS preflight (OPTIONS with Origin and
 * Access-Control-Request-Method, 2xx, no body) is protocol, not an operation, and is not checked.
 */

export interface RecordedResponse {
  method: string;
  /** The request target as received: path and query, still percent-encoded. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** The bytes of the body as sent (before any transport framing). */
  body: Buffer;
  /** The request's headers (to tell a CORS preflight from an API call). */
  requestHeaders?: Record<string, string | string[] | undefined>;
}

type JsonObject = Record<string, unknown>;

export const OPENAPI_PATH = join(__dirname, '..', '..', 'openapi.json');
const DOC_ID = 'urn:plant-store:openapi';
/** Express's router defaults (case-insensitive, non-strict): `/Plants/` is the route `/plants`. */
const ROUTER_FLAGS = 'i';
const DOCS_EXEMPT = /^\/docs(?:$|[/\-.])/i;
const FALLBACK_ERROR_SCHEMA = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'integer' }, message: { type: 'string' } },
};

// ---------------------------------------------------------------------------------------------
// Numbers: read exactly. An integer within ±(2^53 - 1) becomes a number, a larger one a BigInt (a
// custom keyword accepts BigInt wherever the schema accepts an integer, with exact bounds).
// ---------------------------------------------------------------------------------------------

const MAX_EXPONENT = 4000;

/** The value of a JSON number literal, exact for integers of any size. */
export function exactNumber(literal: string): number | bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return Number(literal);
  const [, sign, intPart, fracPart = '', expPart = '0'] = m;
  let digits = (intPart + fracPart).replace(/^0+(?=\d)/, '');
  let exponent = Number(expPart) - fracPart.length;
  if (/^0+$/.test(digits)) return 0;
  while (exponent < 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent += 1;
  }
  if (exponent < 0) {
    // Not an integer. A double that rounds it to an integer (1e-400 -> 0) would pass `integer`:
    // NaN fails every numeric type instead (the service never writes such a number).
    const value = Number(literal);
    return Number.isInteger(value) ? NaN : value;
  }
  const magnitude = BigInt(digits) * 10n ** BigInt(Math.min(exponent, MAX_EXPONENT));
  const value = sign === '-' ? -magnitude : magnitude;
  return value >= BigInt(-Number.MAX_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** Parses JSON text keeping integers exact; any duplicate key is an error. */
export function parseExactJson(text: string): unknown {
  return parse(text, null, {
    parseNumber: exactNumber,
    onDuplicateKey: ({ key }) => {
      throw new SyntaxError(`duplicate key "${key}"`);
    },
  });
}

const FORMAT_RANGES: Record<string, [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
};

interface BigIntRule {
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
}

/** A bound written as a double, as an exact integer comparison for BigInt data. */
function bigIntWithin(data: bigint, rule: BigIntRule): boolean {
  const range = rule.format ? FORMAT_RANGES[rule.format] : undefined;
  if (range && (data < range[0] || data > range[1])) return false;
  const bound = (n: number | undefined) => (typeof n === 'number' && Number.isFinite(n) ? n : undefined);
  const min = bound(rule.minimum);
  const max = bound(rule.maximum);
  const xmin = bound(rule.exclusiveMinimum);
  const xmax = bound(rule.exclusiveMaximum);
  // data is beyond ±2^53, so comparing against ceil/floor of a double bound is exact.
  if (min !== undefined && data < BigInt(Math.ceil(min))) return false;
  if (max !== undefined && data > BigInt(Math.floor(max))) return false;
  if (xmin !== undefined && data <= BigInt(Math.floor(xmin))) return false;
  if (xmax !== undefined && data >= BigInt(Math.ceil(xmax))) return false;
  if (rule.multipleOf !== undefined && Number.isInteger(rule.multipleOf) && data % BigInt(rule.multipleOf) !== 0n)
    return false;
  return true;
}

/**
 * OpenAPI 3.0 schemas in JSON Schema terms: `nullable` becomes a null alternative, boolean
 * `exclusiveMinimum`/`exclusiveMaximum` become numeric ones, and every numeric schema also accepts
 * a BigInt (keyword `x-bigint`, exact bounds and format range), because Ajv's `integer` only knows
 * JavaScript numbers.
 */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  let out: JsonObject = {};
  for (const [key, value] of Object.entries(node as JsonObject)) out[key] = toJsonSchema(value);

  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] === 'boolean') {
      if (out[flag] && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else {
        delete out[flag];
      }
    }
  }
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else {
      out = { anyOf: [out, { type: 'null' }] };
    }
  } else if (out.nullable === false) {
    delete out.nullable;
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes('integer') || types.includes('number')) {
    const rule: BigIntRule = {};
    for (const key of ['format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'] as const) {
      if (out[key] !== undefined) (rule as JsonObject)[key] = out[key];
    }
    out = { anyOf: [out, { 'x-bigint': rule }] };
  }
  return out;
}

function createAjv(): Ajv {
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    verbose: true,
    strictNumbers: true,
    validateSchema: false,
    logger: false,
  });
  addFormats(ajv);
  // OpenAPI format names that are annotations only.
  for (const name of ['float', 'double', 'byte', 'binary', 'password']) ajv.addFormat(name, true);
  ajv.addKeyword({
    keyword: 'x-bigint',
    schemaType: 'object',
    errors: false,
    validate: (rule: BigIntRule, data: unknown) => typeof data === 'bigint' && bigIntWithin(data, rule),
  });
  return ajv;
}

// ---------------------------------------------------------------------------------------------
// The checker
// ---------------------------------------------------------------------------------------------

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const pointerOf = (segments: string[]) =>
  segments
    .map(escapePointer)
    .map(encodeURIComponent)
    .map((s) => `/${s}`)
    .join('');

interface PathTemplate {
  template: string;
  pattern: RegExp;
  params: string[];
  literalSegments: number;
}

function compileTemplate(template: string): PathTemplate {
  const params: string[] = [];
  let literalSegments = 0;
  const source = template
    .split('/')
    .map((segment) => {
      if (!segment.includes('{')) literalSegments += segment ? 1 : 0;
      return segment
        .split(/(\{[^}]+\})/)
        .map((part) => {
          const param = /^\{([^}]+)\}$/.exec(part);
          if (param) {
            params.push(param[1]);
            return '([^/]+)';
          }
          return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        })
        .join('');
    })
    .join('/');
  return { template, pattern: new RegExp(`^${source}/?$`, ROUTER_FLAGS), params, literalSegments };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export class OpenApiContract {
  private readonly ajv = createAjv();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: PathTemplate[];

  constructor(private readonly doc: JsonObject) {
    this.ajv.addSchema(toJsonSchema(doc) as JsonObject, DOC_ID);
    const paths = (doc.paths ?? {}) as JsonObject;
    // Concrete paths are matched before templated ones (OpenAPI 3, "Path Templating Matching").
    this.templates = Object.keys(paths)
      .map(compileTemplate)
      .sort((a, b) => a.params.length - b.params.length || b.literalSegments - a.literalSegments);
  }

  /** The committed openapi.json, read once per test file. */
  static fromFile(path = OPENAPI_PATH): OpenApiContract {
    return new OpenApiContract(JSON.parse(readFileSync(path, 'utf8')) as JsonObject);
  }

  /** Every way `response` breaks the contract; empty when it keeps it. */
  check(response: RecordedResponse): string[] {
    const method = response.method.toUpperCase();
    const path = response.url.split('?')[0];
    if (DOCS_EXEMPT.test(path)) return [];
    if (isCorsPreflight(response) && response.status >= 200 && response.status < 300 && response.body.length === 0) {
      // A browser's CORS preflight (Fetch standard), answered by the CORS layer before any route:
      // not an API operation, and OpenAPI has no place for it short of an `options` operation per
      // path. A refused preflight falls through to the rules below (an unsupported method: 404).
      return [];
    }

    const match = this.matchPath(path);
    if (!match) {
      // docs/api.md: malformed percent-encoding is 400, wherever it is (the path is no path at all).
      const statuses = isDecodable(path) ? [404, 429] : [400, 404, 429];
      return this.checkUnknownRoute(
        response,
        isDecodable(path) ? 'path not in the document' : 'path with malformed percent-encoding',
        statuses,
      );
    }
    const pathItem = this.node(['paths', match.template]) as JsonObject;
    const operationSegments = ['paths', match.template, method.toLowerCase()];
    const operation = METHODS.includes(method.toLowerCase())
      ? (this.node(operationSegments) as JsonObject | undefined)
      : undefined;
    if (!operation)
      return this.checkUnknownRoute(
        response,
        `method ${method} not documented for ${match.template}`,
        isDecodable(path) ? [404, 429] : [400, 404, 429],
      );

    const problems: string[] = [];
    const badParams = this.checkPathParams(match, pathItem, operation, operationSegments);
    if (badParams.length > 0 && response.status < 400) {
      problems.push(`answered ${response.status} to an invalid path parameter (${badParams.join('; ')})`);
    }

    const responses = (operation.responses ?? {}) as JsonObject;
    const key = [String(response.status), `${Math.floor(response.status / 100)}XX`, 'default'].find(
      (k) => k in responses,
    );
    if (!key) {
      problems.push(
        `status ${response.status} is not documented for ${method} ${match.template} (documented: ${Object.keys(responses).join(', ')})`,
      );
      return problems;
    }
    return [...problems, ...this.checkResponse(response, [...operationSegments, 'responses', key])];
  }

  private checkUnknownRoute(response: RecordedResponse, why: string, statuses: number[]): string[] {
    if (!statuses.includes(response.status)) {
      return [`${why}, so it must be ${statuses.join(' or ')} with the Error body, but it answered ${response.status}`];
    }
    const problems: string[] = [];
    const type = String(response.headers['content-type'] ?? '');
    if (!/^application\/json\b/i.test(type))
      problems.push(`${why}: the ${response.status} has Content-Type "${type}", not application/json`);
    const errorSchema =
      this.node(['components', 'schemas', 'Error']) === undefined
        ? 'fallback-error'
        : ['components', 'schemas', 'Error'];
    problems.push(...this.checkJsonBody(response, errorSchema).map((p) => `${why}: ${p}`));
    return problems;
  }

  private checkResponse(response: RecordedResponse, segments: string[]): string[] {
    const problems: string[] = [];
    const resolved = this.resolve(segments);
    if (!isObject(resolved.value))
      return [`the document's response at ${segments.join(' ')} is not an object (a broken $ref?)`];
    const spec = resolved.value;

    const headers = (spec.headers ?? {}) as JsonObject;
    for (const name of Object.keys(headers)) {
      if (name.toLowerCase() === 'content-type') continue;
      const header = this.resolve([...resolved.segments, 'headers', name]);
      const definition = header.value as JsonObject;
      const raw = response.headers[name.toLowerCase()];
      if (raw === undefined) {
        if (definition.required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      if (definition.schema !== undefined) {
        const value = Array.isArray(raw) ? raw.join(', ') : String(raw);
        const schemaSegments = [...header.segments, 'schema'];
        const errors = this.validate(schemaSegments, fromText(value, this.resolve(schemaSegments).value));
        if (errors) problems.push(`header ${name}: ${JSON.stringify(value)} ${errors}`);
      }
    }

    const content = spec.content as JsonObject | undefined;
    const hasBody =
      response.body.length > 0 &&
      response.method.toUpperCase() !== 'HEAD' &&
      response.status !== 204 &&
      response.status !== 304;
    if (!content || Object.keys(content).length === 0) {
      if (hasBody) problems.push(`a body was sent, but the response documents none: ${preview(response.body)}`);
      return problems;
    }
    if (!hasBody) {
      if (response.method.toUpperCase() !== 'HEAD')
        problems.push(`no body, but the response documents ${Object.keys(content).join(', ')}`);
      return problems;
    }
    const type = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    const mediaKey =
      Object.keys(content).find((k) => k.toLowerCase() === type) ??
      Object.keys(content).find((k) => k.endsWith('/*') && type.startsWith(k.slice(0, -1).toLowerCase())) ??
      Object.keys(content).find((k) => k === '*/*');
    if (!mediaKey) {
      problems.push(`Content-Type "${type}" is not documented (documented: ${Object.keys(content).join(', ')})`);
      return problems;
    }
    const media = content[mediaKey] as JsonObject;
    if (isJsonType(type)) {
      problems.push(
        ...this.checkJsonBody(
          response,
          media.schema === undefined ? null : [...resolved.segments, 'content', mediaKey, 'schema'],
        ),
      );
    }
    return problems;
  }

  /**
   * A JSON body, read exactly, against the schema at `schema` (null: any JSON; 'fallback-error': the
   * Error shape, for a document without an Error schema). Error-shaped bodies carry their status.
   */
  private checkJsonBody(response: RecordedResponse, schema: string[] | null | 'fallback-error'): string[] {
    // An answer to HEAD carries the headers of the body, never the body itself.
    if (response.method.toUpperCase() === 'HEAD') return [];
    const body = decodeBody(response);
    if (typeof body === 'object' && body !== null && 'unreadable' in body)
      return [(body as { unreadable: string }).unreadable];
    let value: unknown;
    try {
      value = parseExactJson((body as { text: string }).text);
    } catch (error) {
      return [`body is not valid JSON (${(error as Error).message}): ${preview(response.body)}`];
    }
    const problems: string[] = [];
    const errors =
      schema === null
        ? null
        : schema === 'fallback-error'
          ? this.validateFallbackError(value)
          : this.validate(schema, value);
    if (errors) problems.push(`body ${errors}: ${preview(response.body)}`);
    if (response.status >= 400 && isObject(value) && 'error' in value && value.error !== response.status) {
      problems.push(`Error body says error ${String(value.error)} but the status is ${response.status}`);
    }
    return problems;
  }

  private validateFallbackError(value: unknown): string | null {
    const validate = this.ajv.compile(FALLBACK_ERROR_SCHEMA);
    return validate(value) ? null : describeErrors(validate.errors);
  }

  private checkPathParams(
    match: PathMatch,
    pathItem: JsonObject,
    operation: JsonObject,
    operationSegments: string[],
  ): string[] {
    const problems: string[] = [];
    const declared = new Map<string, string[]>();
    for (const [owner, list] of [
      [['paths', match.template], pathItem.parameters],
      [operationSegments, operation.parameters],
    ] as const) {
      (Array.isArray(list) ? list : []).forEach((_, index) => {
        const param = this.resolve([...owner, 'parameters', String(index)]);
        const value = param.value as JsonObject;
        if (value.in === 'path' && typeof value.name === 'string' && value.schema !== undefined) {
          declared.set(value.name, [...param.segments, 'schema']);
        }
      });
    }
    match.params.forEach((name, index) => {
      const schemaSegments = declared.get(name);
      if (!schemaSegments) return;
      let text: string;
      try {
        text = decodeURIComponent(match.values[index]);
      } catch {
        problems.push(`${name}: malformed percent-encoding`);
        return;
      }
      const errors = this.validate(schemaSegments, fromText(text, this.resolve(schemaSegments).value));
      if (errors) problems.push(`${name}=${JSON.stringify(text)} ${errors}`);
    });
    return problems;
  }

  private matchPath(path: string): PathMatch | undefined {
    for (const t of this.templates) {
      const m = t.pattern.exec(path);
      if (m) return { template: t.template, params: t.params, values: m.slice(1) };
    }
    return undefined;
  }

  private validate(segments: string[], value: unknown): string | null {
    const pointer = pointerOf(segments);
    let validate = this.validators.get(pointer);
    if (!validate) {
      try {
        validate = this.ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      } catch (error) {
        // A broken document (e.g. a $ref to a schema it lacks) is a contract failure, not a crash.
        return `cannot be checked: the schema at #${decodeURIComponent(pointer)} does not compile (${(error as Error).message})`;
      }
      this.validators.set(pointer, validate);
    }
    return validate(value) ? null : describeErrors(validate.errors);
  }

  private node(segments: string[]): unknown {
    let node: unknown = this.doc;
    for (const segment of segments) {
      if (!isObject(node) && !Array.isArray(node)) return undefined;
      node = (node as JsonObject)[segment];
    }
    return node;
  }

  /** The node at `segments`, following local `$ref`s (responses, headers and parameters may be references). */
  private resolve(segments: string[]): { value: unknown; segments: string[] } {
    let current = segments;
    for (let hops = 0; hops < 20; hops += 1) {
      const value = this.node(current);
      const ref = isObject(value) ? value.$ref : undefined;
      if (typeof ref !== 'string' || !ref.startsWith('#/')) return { value, segments: current };
      current = ref
        .slice(2)
        .split('/')
        .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
    }
    throw new Error(`$ref loop at ${segments.join('/')}`);
  }
}

interface PathMatch {
  template: string;
  params: string[];
  values: string[];
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCorsPreflight(response: RecordedResponse): boolean {
  const headers = response.requestHeaders ?? {};
  return (
    response.method.toUpperCase() === 'OPTIONS' &&
    headers.origin !== undefined &&
    headers['access-control-request-method'] !== undefined
  );
}

function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function isJsonType(mediaType: string): boolean {
  return /^application\/(?:[\w.+-]+\+)?json$/i.test(mediaType);
}

/** A parameter or header value, read as the type its schema asks for (an int64 stays exact). */
function fromText(text: string, schema: unknown): unknown {
  const types = new Set<string>();
  const collect = (node: unknown) => {
    if (!isObject(node)) return;
    for (const t of Array.isArray(node.type) ? node.type : [node.type]) if (typeof t === 'string') types.add(t);
    for (const key of ['anyOf', 'oneOf', 'allOf'])
      if (Array.isArray(node[key])) (node[key] as unknown[]).forEach(collect);
  };
  collect(schema);
  if (types.has('integer') && /^-?\d+$/.test(text)) return exactNumber(text.replace(/^(-?)0+(?=\d)/, '$1'));
  if (types.has('number') && /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) return exactNumber(text);
  if (types.has('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

function decodeBody(response: RecordedResponse): { text: string } | { unreadable: string } {
  let bytes = response.body;
  const encoding = String(response.headers['content-encoding'] ?? 'identity').toLowerCase();
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') bytes = gunzipSync(bytes);
    else if (encoding === 'deflate') bytes = inflateSync(bytes);
    else if (encoding === 'br') bytes = brotliDecompressSync(bytes);
    else if (encoding !== 'identity') return { unreadable: `unknown Content-Encoding ${encoding}` };
  } catch {
    return { unreadable: `body does not decode as ${encoding}` };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { unreadable: `body is not valid UTF-8: ${preview(bytes)}` };
  }
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  // anyOf branches added for BigInt repeat the real problem; keep each distinct message once.
  const lines = (errors ?? [])
    .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'x-bigint')
    .map((e) => {
      const where = e.instancePath || '(root)';
      // A BigInt fails `type: integer` only when its own branch (x-bigint) refused it too: out of range.
      if (typeof e.data === 'bigint') return `${where} = ${e.data} is outside the documented integer range or format`;
      const extra = e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : '';
      return `${where} ${e.message ?? e.keyword}${extra}`;
    });
  return [...new Set(lines.length > 0 ? lines : ['does not match the schema'])].join('; ');
}

function preview(body: Buffer): string {
  const text = body.toString('utf8');
  return text.length > 200 ? `${JSON.stringify(text.slice(0, 200))}…` : JSON.stringify(text);
}

// ---------------------------------------------------------------------------------------------
// Recording what the test apps send, and the afterEach check
// ---------------------------------------------------------------------------------------------

const STORE = Symbol.for('plant-store.openapi-contract.recorded');

function recorded(): RecordedResponse[] {
  const holder = globalThis as unknown as Record<symbol, RecordedResponse[] | undefined>;
  return (holder[STORE] ??= []);
}

/** Adds a response to the record, to be checked after the current test. */
export function addRecordedResponse(response: RecordedResponse): void {
  recorded().push(response);
}

/** Returns and forgets everything recorded so far. */
export function takeRecordedResponses(): RecordedResponse[] {
  return recorded().splice(0);
}

let shared: OpenApiContract | undefined;

/** The contract of the committed openapi.json, loaded once per test file. */
export function contract(): OpenApiContract {
  return (shared ??= OpenApiContract.fromFile());
}

export function describeRecordedRequest(response: RecordedResponse): string {
  const url = response.url.length > 120 ? `${response.url.slice(0, 120)}…(${response.url.length} chars)` : response.url;
  return `${response.method} ${url} -> ${response.status}`;
}

/** Violations of every response recorded since the last call (recorded responses are consumed). */
export function recordedViolations(checker: OpenApiContract = contract()): string[] {
  return takeRecordedResponses().flatMap((response) =>
    checker.check(response).map((problem) => `${describeRecordedRequest(response)}: ${problem}`),
  );
}

/** Throws, listing each violation, when a response recorded since the last call broke the contract. */
export function assertRecordedResponsesMatchContract(checker: OpenApiContract = contract()): void {
  const violations = recordedViolations(checker);
  if (violations.length > 0) {
    throw new Error(
      `${violations.length} response(s) broke the OpenAPI contract (openapi.json):\n` +
        violations.map((v) => `  - ${v}`).join('\n'),
    );
  }
}

/**
 * Express middleware that records every response as sent: method, request target, status, headers
 * and the body bytes handed to write()/end() (whatever produced them: res.send, res.json, a stream).
 * Install it before anything else can answer.
 */
export function recordResponses(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    captureResponse(req, res, addRecordedResponse);
    next();
  };
}

function captureResponse(req: IncomingMessage, res: ServerResponse, done: (response: RecordedResponse) => void): void {
  const chunks: Buffer[] = [];
  const headArgs: OutgoingHttpHeaders = {};
  const toBuffer = (chunk: unknown, encoding: unknown): Buffer | undefined => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
    if (Buffer.isBuffer(chunk)) return chunk;
    if (chunk instanceof Uint8Array) return Buffer.from(chunk);
    return Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  };

  const originalWrite = res.write;
  const originalEnd = res.end;
  const originalWriteHead = res.writeHead;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    const buffer = toBuffer(chunk, rest[0]);
    if (buffer) chunks.push(buffer);
    return (originalWrite as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof res.write;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const headers = args.find((a, i) => i > 0 && typeof a === 'object' && a !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2)
        headArgs[String(headers[i]).toLowerCase()] = String(headers[i + 1]);
    } else if (headers) {
      for (const [k, v] of Object.entries(headers as OutgoingHttpHeaders)) headArgs[k.toLowerCase()] = v;
    }
    return (originalWriteHead as (...args: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.writeHead;
  let ended = false;
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    const result = (originalEnd as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    if (ended) return result;
    ended = true;
    const buffer = toBuffer(chunk, rest[0]);
    if (buffer) chunks.push(buffer);
    const headers: RecordedResponse['headers'] = {};
    for (const [k, v] of Object.entries({ ...res.getHeaders(), ...headArgs }))
      headers[k.toLowerCase()] = v as string | string[] | number | undefined;
    done({
      method: req.method ?? 'GET',
      url: (req as Request).originalUrl ?? req.url ?? '/',
      status: res.statusCode,
      headers,
      body: Buffer.concat(chunks),
      requestHeaders: { ...req.headers },
    });
    return result;
  } as typeof res.end;
}
