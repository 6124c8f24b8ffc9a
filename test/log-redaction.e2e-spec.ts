import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';
import { waitFor } from './utils/wait-for';

/** A JWT's shape (header `{"alg":"RS256"}`), as a client might paste one into a URL. */
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJsZWFrZWQtand0In0.c2lnbmF0dXJlLW9mLXRoZS1qd3Q';

/**
 * A token a client pasted into a URL reaches no log line, whatever the answer: the request line
 * and the exception filter's line of a 5xx both write the path redacted. The database is closed, so
 * looking the token up fails and the request is answered 503, the answer whose line quoted the path.
 */
describe.each(testDatabases())('Tokens in a URL, with the database closed (%s)', (database) => {
  let t: TestApp;
  let secret: string;
  const lines: string[] = [];

  beforeAll(async () => {
    const logSink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    t = await startTestApp(database, { LOG_LEVEL: 'trace' }, { logSink });
    await t.reset();
    // Issued, never used: its first lookup comes once the database is closed.
    secret = await t.token({ subject: 'pasted', scopes: ['plants:read', 'plants:write', 'webhooks:manage'] });
    await t.dataSource.destroy();
  });
  afterAll(() => t.close());

  /** The lines of one request so far, parsed. */
  const linesOf = (requestId: string) =>
    lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.requestId === requestId);

  it.each([
    ['the token', 'DELETE', (token: string) => `/plants/${token}`, 'DELETE /plants/[redacted]'],
    [
      'the token, in the path and the query,',
      'GET',
      (token: string) => `/webhooks/${token}/deliveries?access_token=${token}`,
      'GET /webhooks/[redacted]/deliveries',
    ],
    ['a JWT', 'DELETE', () => `/plants/${JWT}`, 'DELETE /plants/[redacted]'],
    [
      'the token, percent-encoded,',
      'DELETE',
      (token: string) => `/plants/${token.replace(/[_-]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
      'DELETE /plants/[redacted]',
    ],
  ])('%s in the URL of a %s answered 503 is in no line', async (_label, method, pathWith, written) => {
    const requestId = randomUUID();
    const url = pathWith(secret);
    const res = await (method === 'GET' ? t.http().get(url) : t.http().delete(url))
      .set(bearer(secret))
      .set('X-Request-Id', requestId);
    expectErrorBody(res, 503);

    // The filter's line and the request line; the test would prove nothing without them.
    await waitFor(() => linesOf(requestId).length >= 2, { what: `the lines of ${requestId}` });
    const filterLine = linesOf(requestId).find((line) => line.path === undefined);
    const requestLine = linesOf(requestId).find((line) => line.path !== undefined);
    expect(filterLine).toMatchObject({
      level: 'warn',
      msg: expect.stringContaining(`${written} -> 503: `),
    });
    expect(requestLine).toMatchObject({ level: 'error', path: written.split(' ')[1], status: 503 });

    const everything = lines.join('\n');
    // The token as it was sent, and as it is.
    expect(everything).not.toContain(url.split('/')[2].split('?')[0]);
    expect(everything).not.toContain(secret.slice('pst_'.length));
    expect(everything).not.toContain(JWT.split('.')[1]);
  });
});
