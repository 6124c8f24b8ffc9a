import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCOPES_EXTENSION } from '../../src/auth/decorators/require-scopes.decorator';
import { HTTP_LAYER_REFUSALS } from '../../src/common/http/http-layer-errors';
import { ANSWERED_BY_THE_SERVICE } from '../../src/setup/openapi-document';
import { markdownTable } from './fragments';
import { code } from './readable';

/** The parts of the committed OpenAPI document the docs' tables read. */
interface Response {
  description: string;
  content?: { 'application/json'?: { examples?: Record<string, { summary: string }> } };
}

interface Operation {
  operationId: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema?: { $ref?: string } }> };
  responses: Record<string, Response>;
  [SCOPES_EXTENSION]?: string[];
}

export interface Route {
  method: string;
  path: string;
  operation: Operation;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Every operation of openapi.json (test/openapi.e2e-spec.ts holds it to the code), in its order. */
export function routesOf(root: string): Route[] {
  const document = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, Operation>>;
  };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      method: method.toUpperCase(),
      path,
      operation: item[method],
    })),
  );
}

/** The API's routes: those that need a token (the health probes are public). */
export const needsToken = ({ operation }: Route): boolean =>
  (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);

/** Failures the document adds to every operation they reach: not a route's own. */
const ANSWERED_BEFORE_THE_ROUTE = new Set(
  [...ANSWERED_BY_THE_SERVICE.flatMap((rule) => rule.errors), ...HTTP_LAYER_REFUSALS].map((error) => error.name),
);

const sentence = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** A route's own failures, by status: each status with what its failures say, named by their examples. */
function ownFailures(operation: Operation): [string, string[]][] {
  return Object.entries(operation.responses)
    .filter(([status]) => Number(status) >= 400)
    .map(([status, response]): [string, string[]] => [
      status,
      Object.entries(response.content?.['application/json']?.examples ?? {})
        .filter(([name]) => !ANSWERED_BEFORE_THE_ROUTE.has(name))
        .map(([, example]) => sentence(example.summary)),
    ])
    .filter(([, failures]) => failures.length > 0);
}

function call({ method, path, operation }: Route): string {
  const body = Object.values(operation.requestBody?.content ?? {})[0]
    ?.schema?.$ref?.split('/')
    .pop();
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map((p) => code(p.name));
  return [code(`${method} ${path}`), body && `body ${code(body)}`, query.length > 0 && `query ${query.join(', ')}`]
    .filter(Boolean)
    .join(', ');
}

const scopes = ({ operation }: Route) => (operation[SCOPES_EXTENSION] ?? []).map(code).join(', ');

function success({ operation }: Route): string {
  const [status, response] = Object.entries(operation.responses).find(([status]) => status.startsWith('2')) ?? [];
  return status === undefined ? '' : `**${status}**, ${sentence(response!.description)}`;
}

/**
 * Every route that needs a token, with its scope, its success and its own failures (what every
 * route can answer is in docs/api.md, under its table).
 */
export function routesTable(routes: readonly Route[]): string {
  return markdownTable(
    ['call', 'scope', 'success', 'its own failures'],
    routes.filter(needsToken).map((route) => [
      call(route),
      scopes(route),
      success(route),
      ownFailures(route.operation)
        .map(([status, failures]) => `${status} ${failures.join('; or ')}`)
        .join('<br>'),
    ]),
  );
}

/** The routes in short: their own failures by status alone. */
export function routesSummary(routes: readonly Route[]): string {
  return markdownTable(
    ['call', 'scope', 'success', 'its own failures'],
    routes.filter(needsToken).map((route) => [
      code(`${route.method} ${route.path}`),
      scopes(route),
      success(route),
      ownFailures(route.operation)
        .map(([status]) => status)
        .join(', '),
    ]),
  );
}
