import { randomBytes } from 'node:crypto';
import { Server } from 'node:http';
import { BODY_LIMIT_BYTES } from '../src/common/json/json-body.limits';
import { isRateLimited } from '../src/rate-limit/rate-limit.middleware';
import { testDatabases } from './utils/databases';
import {
  COMMITTED,
  HTTP_METHODS,
  OpenApiDocument,
  Operation,
  bodyOf,
  missingSamples,
  operationsOf,
  pathOf,
} from './utils/operations';
import { listenOnLoopback, rawRequest, rawSocketExchange } from './utils/raw-http';
import { TestApp, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

/**
 * Every refusal the service can give a request whatever its route (Node's HTTP layer, the rate
 * limit, authentication, the body reader, the router, the database), sent to every operation of the
 * app's own OpenAPI document: each answer must be a status openapi.json declares for that very
 * operation, by its number and with the Error schema, and its body `{error: <status>, message}`
 * (docs/api.md, "Errors"). A new operation is covered by being documented (with a body it accepts, if
 * it takes one, in test/utils/operations.ts); a new kind of refusal is a line in one of the lists below.
 */

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const ERROR_SCHEMA = '#/components/schemas/Error';

/** Three base64url parts: taken for an identity provider's access token once OIDC_ISSUER is set. */
const JWT_SHAPED = 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln';

async function servedOperations(t: TestApp): Promise<Operation[]> {
  const res = await t.http().get('/docs-json');
  expect(res.status).toBe(200);
  return operationsOf(res.body as OpenApiDocument);
}

interface Variation {
  /** Authorization headers to send, none for an empty list; a valid token's by default. */
  authorization?: string[];
  contentType?: string;
  body?: string;
  path?: string;
}

/** The operation's request, valid but for the variation, with exactly the headers given. */
function send(port: number, token: string, operation: Operation, variation: Variation = {}): Promise<Answer> {
  const authorization = variation.authorization ?? [`Bearer ${token}`];
  const body = variation.body ?? (operation.takesBody ? bodyOf(operation) : undefined);
  const headers: [string, string][] = [
    ['Host', '127.0.0.1'],
    ...authorization.map((value): [string, string] => ['Authorization', value]),
  ];
  if (body !== undefined) {
    headers.push(['Content-Type', variation.contentType ?? 'application/json']);
    headers.push(['Content-Length', String(Buffer.byteLength(body))]);
  }
  return rawRequest(port, { method: operation.method, path: variation.path ?? pathOf(operation), headers, body }).then(
    (res) => ({ status: res.status, contentType: String(res.headers['content-type'] ?? ''), text: res.text }),
  );
}

/** Bytes on a socket of their own, for what Node's HTTP client will not send; the answer as Node's layer wrote it. */
async function sendRaw(port: number, bytes: string): Promise<Answer> {
  const { text } = await rawSocketExchange(port, Buffer.from(bytes, 'latin1'));
  const end = text.indexOf('\r\n\r\n');
  const [statusLine, ...fields] = text.slice(0, end).split('\r\n');
  const contentType = fields.find((field) => /^content-type:/i.test(field))?.replace(/^[^:]*:\s*/, '') ?? '';
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), contentType, text: text.slice(end + 4) };
}

/** The request line and the start of the headers of the operation's request. */
const requestHead = (operation: Operation, token: string) =>
  `${operation.method} ${pathOf(operation)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n`;

/** Whatever is wrong with an error answer's body: it must be exactly `{error: <status>, message}` as JSON. */
function errorBodyProblems(answer: Answer): string[] {
  const said = `${answer.status} ${answer.text.slice(0, 200)}`;
  if (!/^application\/json\b/.test(answer.contentType)) return [`answered ${said} as "${answer.contentType}"`];
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  const { error, message, ...rest } = (body ?? {}) as Record<string, unknown>;
  const clean = error === answer.status && typeof message === 'string' && message !== '';
  return clean && Object.keys(rest).length === 0
    ? []
    : [`answered ${said}, which is not {"error": ${answer.status}, "message": "..."}`];
}

/** Whatever breaks the contract in `answer` to `operation`, which must be `expected` when given. */
function problemsWith(operation: Operation, answer: Answer, expected: number | undefined): string[] {
  const problems: string[] = [];
  if (expected !== undefined && answer.status !== expected) {
    problems.push(`answered ${answer.status} ${answer.text.slice(0, 200)}, not ${expected}`);
  }
  // By its number, not a range: a client tells these answers apart by their status.
  const declared =
    COMMITTED.paths[operation.path]?.[operation.method.toLowerCase()]?.responses?.[String(answer.status)];
  if (declared === undefined) {
    problems.push(`answered ${answer.status}, which openapi.json does not declare for it`);
  } else if (answer.status >= 400 && declared.content?.['application/json']?.schema?.$ref !== ERROR_SCHEMA) {
    problems.push(`openapi.json declares its ${answer.status} without the Error schema`);
  }
  return answer.status >= 400 ? [...problems, ...errorBodyProblems(answer)] : problems;
}

interface Refusal<Context> {
  name: string;
  /** The status the operation must answer; undefined where the refusal does not apply (any declared answer). */
  expects: (operation: Operation) => number | undefined;
  /** Sends the request; null where it cannot be made for the operation. */
  send: (context: Context, operation: Operation) => Promise<Answer> | null;
}

async function problemsOf<Context>(
  refusal: Refusal<Context>,
  context: Context,
  operations: Operation[],
): Promise<string[]> {
  // Side by side: a request that must time out takes as long whatever the others do.
  const found = await Promise.all(
    operations.map(async (operation) => {
      const answer = await refusal.send(context, operation);
      if (answer === null) return [];
      return problemsWith(operation, answer, refusal.expects(operation)).map((p) => `${operation.label}: ${p}`);
    }),
  );
  return found.flat();
}

const withToken = (status: number) => (operation: Operation) => (operation.needsToken ? status : undefined);
const withBody = (status: number) => (operation: Operation) => (operation.takesBody ? status : undefined);
const always = (status: number) => () => status;

/** Where the instance under test listens, and a token with every scope. */
interface Instance {
  port: number;
  token: string;
}

interface Serving extends Instance {
  /** A token with no scope at all: it lacks the one of any operation. */
  scopeless: string;
}

/** What a serving instance refuses, whatever the route. */
const SERVING: Refusal<Serving>[] = [
  {
    name: 'more than one Authorization header',
    expects: withToken(400),
    send: ({ port, token }, op) => send(port, token, op, { authorization: [`Bearer ${token}`, `Bearer ${token}`] }),
  },
  {
    name: 'no token',
    expects: withToken(401),
    send: ({ port, token }, op) => send(port, token, op, { authorization: [] }),
  },
  {
    name: 'an unknown token',
    expects: withToken(401),
    send: ({ port, token }, op) =>
      send(port, token, op, { authorization: [`Bearer pst_${randomBytes(32).toString('base64url')}`] }),
  },
  {
    name: 'a token without the scope',
    expects: withToken(403),
    send: ({ port, scopeless }, op) => send(port, scopeless, op),
  },
  {
    name: "an identity provider's access token while its signing keys cannot be fetched",
    expects: withToken(503),
    send: ({ port, token }, op) => send(port, token, op, { authorization: [`Bearer ${JWT_SHAPED}`] }),
  },
  {
    name: 'a body over the cap',
    expects: withBody(413),
    send: ({ port, token }, op) => send(port, token, op, { body: `{"name":"${'a'.repeat(BODY_LIMIT_BYTES + 1024)}"}` }),
  },
  {
    name: 'a body that is not JSON',
    expects: withBody(415),
    send: ({ port, token }, op) => send(port, token, op, { body: 'Fern', contentType: 'text/plain' }),
  },
  {
    name: 'malformed JSON',
    expects: withBody(400),
    send: ({ port, token }, op) => send(port, token, op, { body: '{"id":' }),
  },
  {
    name: 'malformed percent-encoding in a path parameter',
    expects: always(400),
    send: ({ port, token }, op) =>
      op.pathParameters.length === 0 ? null : send(port, token, op, { path: pathOf(op, '%zz') }),
  },
  {
    name: 'a request that is not valid HTTP/1.1',
    expects: always(400),
    send: ({ port, token }, op) => sendRaw(port, `${requestHead(op, token)}Bad Header: x\r\n\r\n`),
  },
  {
    name: 'an HTTP/1.1 request without Host',
    expects: always(400),
    send: ({ port, token }, op) =>
      sendRaw(port, `${op.method} ${pathOf(op)} HTTP/1.1\r\nAuthorization: Bearer ${token}\r\n\r\n`),
  },
  {
    name: 'request line and headers over 16 KiB',
    expects: always(431),
    send: ({ port, token }, op) => sendRaw(port, `${requestHead(op, token)}X-Filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`),
  },
  {
    name: 'an Expect other than 100-continue',
    expects: always(417),
    send: ({ port, token }, op) => sendRaw(port, `${requestHead(op, token)}Expect: 200-ok\r\n\r\n`),
  },
  {
    name: 'chunk extensions over 16 KiB',
    expects: always(413),
    send: ({ port, token }, op) =>
      sendRaw(
        port,
        `${requestHead(op, token)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `2;${'x'.repeat(17 * 1024)}\r\n{}\r\n0\r\n\r\n`,
      ),
  },
  {
    name: 'headers that do not arrive in time',
    expects: always(408),
    // The headers never end.
    send: ({ port, token }, op) => sendRaw(port, requestHead(op, token)),
  },
];

/**
 * Node's own limit on the time headers may take (60 s), shortened so that the test sees its answer:
 * checked every 100 ms rather than every 30 s (a server option, read when the server starts listening).
 */
const HEADERS_TIMEOUT_MS = 1000;

describe.each(testDatabases())('Refusals every operation declares, on %s', (database) => {
  describe('a serving instance', () => {
    let t: TestApp;
    let context: Serving;
    let operations: Operation[];

    beforeAll(async () => {
      // Nothing listens at the identity provider's address: its keys cannot be fetched.
      t = await startTestApp(database, {
        ...WEBHOOK_TEST_ENV,
        OIDC_ISSUER: 'http://127.0.0.1:9',
        OIDC_AUDIENCE: 'plant-store',
      });
      await t.reset();
      const server = t.app.getHttpServer() as Server & { connectionsCheckingInterval: number };
      server.headersTimeout = HEADERS_TIMEOUT_MS;
      server.connectionsCheckingInterval = 100;
      const port = await listenOnLoopback(t.app);
      const token = await t.token({ subject: 'refused' });
      const scopeless = await t.token({ subject: 'scopeless' });
      // Every token the service issues has at least one scope.
      await t.dataSource.query(`UPDATE api_tokens SET scopes = '' WHERE subject = 'scopeless'`);
      context = { port, token, scopeless };
      operations = await servedOperations(t);
    });
    afterAll(() => t.close());

    it('finds operations with and without a token, a body and path parameters, and what to send each', () => {
      expect(operations.some((op) => op.needsToken) && operations.some((op) => !op.needsToken)).toBe(true);
      expect(operations.some((op) => op.takesBody) && operations.some((op) => op.pathParameters.length > 0)).toBe(true);
      expect(missingSamples(operations)).toEqual([]);
    });

    it.each(SERVING.map((refusal) => [refusal.name, refusal] as const))(
      '%s: each operation answers a status it declares, as {error, message}',
      async (_name, refusal) => {
        expect(await problemsOf(refusal, context, operations)).toEqual([]);
      },
    );

    it('answers a method a documented path does not have 404 {error, message} (OpenAPI has no operation for it)', async () => {
      const problems: string[] = [];
      for (const path of new Set(operations.map((op) => op.path))) {
        const documented = operations.filter((op) => op.path === path);
        for (const method of HTTP_METHODS.map((m) => m.toUpperCase())) {
          if (documented.some((op) => op.method === method)) continue;
          const operation = { ...documented[0], method, label: `${method} ${path}`, takesBody: false };
          const answer = await send(context.port, context.token, operation);
          const found = answer.status === 404 ? errorBodyProblems(answer) : [`answered ${answer.status}, not 404`];
          problems.push(...found.map((p) => `${operation.label}: ${p}`));
        }
      }
      expect(problems).toEqual([]);
    });
  });

  describe('an instance whose rate limit is spent', () => {
    let t: TestApp;
    let context: Instance;
    let operations: Operation[];

    beforeAll(async () => {
      t = await startTestApp(database, { ...WEBHOOK_TEST_ENV, RATE_LIMIT_PER_MINUTE: '1' });
      await t.reset();
      const port = await listenOnLoopback(t.app);
      const token = await t.token({ subject: 'limited' });
      // The one request of the minute: reading the document spends the address's budget.
      operations = await servedOperations(t);
      context = { port, token };
    });
    afterAll(() => t.close());

    it('answers every limited operation 429 {error, message}, as it declares', async () => {
      const refusal: Refusal<Instance> = {
        name: 'over the rate limit',
        expects: (op) => (isRateLimited(op.method, pathOf(op)) ? 429 : undefined),
        send: ({ port, token }, op) => send(port, token, op),
      };
      expect(await problemsOf(refusal, context, operations)).toEqual([]);
    });
  });

  describe('an instance whose database is unavailable', () => {
    let t: TestApp;
    let context: Instance;
    let operations: Operation[];

    beforeAll(async () => {
      t = await startTestApp(database, { ...WEBHOOK_TEST_ENV, TOKEN_CACHE_TTL_MS: '300000' });
      await t.reset();
      const port = await listenOnLoopback(t.app);
      const token = await t.token({ subject: 'unavailable' });
      operations = await servedOperations(t);
      context = { port, token };
      // Known from here on: requests get past authentication to their route.
      const list = operations.find((op) => op.needsToken && op.method === 'GET' && op.pathParameters.length === 0);
      expect((await send(port, token, list!)).status).toBe(200);
      await t.dataSource.destroy();
    });
    afterAll(() => t.close());

    it('answers every operation that needs a token 503 {error, message}, as it declares', async () => {
      const refusal: Refusal<Instance> = {
        name: 'the database unavailable',
        expects: withToken(503),
        send: ({ port, token }, op) => send(port, token, op),
      };
      expect(await problemsOf(refusal, context, operations)).toEqual([]);
    });
  });
});
