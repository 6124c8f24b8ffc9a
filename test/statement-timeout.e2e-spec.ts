import { DatabaseUnavailable } from '../src/common/filters/server.errors';
import { Database } from '../src/database';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';

const onMysql = testDatabases().includes('mysql');
const TIMEOUT_MS = 300;

/** Holds the event loop, as a synchronous write to a stalled disk or a long collection does. */
function holdTheLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // nothing else runs meanwhile
  }
}

/**
 * Sends `next` from the callback of an answer the loop has just read (where a request's work runs),
 * then holds the loop longer than the statement timeout once `next` is on the wire. The database
 * answers `next` at once; its answer waits in the socket until the loop looks again.
 */
function sentBeforeAHeldLoop<T>(first: () => Promise<unknown>, next: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    first().then(() => {
      const sent = next();
      // After the ticks that hand the statement its connection and write it.
      process.nextTick(() => holdTheLoop(3 * TIMEOUT_MS));
      sent.then(resolve, reject);
    }, reject);
  });
}

/**
 * DB_QUERY_TIMEOUT_MS fails a statement the database has not answered in time, not one whose answer
 * arrived while the event loop was held: after a hold longer than the timeout, the loop reads what
 * waits in its sockets before any statement is failed. (SQLite has no statement timeout.)
 */
(onMysql ? describe : describe.skip)('Statement timeout on mysql', () => {
  let t: TestApp;
  let database: Database;

  beforeAll(async () => {
    t = await startTestApp('mysql', { DB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS), TOKEN_CACHE_TTL_MS: '60000' });
    await t.reset();
    database = t.app.get(Database);
  });
  afterAll(() => t?.close());

  it('answers a statement on its own that was answered while the loop was held past the timeout', async () => {
    const rows = await sentBeforeAHeldLoop(
      () => database.query('SELECT 1 AS one', []),
      () => database.query<{ two: number }>('SELECT 2 AS two', []),
    );
    expect(rows.map((row) => Number(row.two))).toEqual([2]);
  });

  it("answers a transaction's statement that was answered while the loop was held past the timeout", async () => {
    const rows = await database.transaction(() =>
      sentBeforeAHeldLoop(
        () => database.query('SELECT 1 AS one', []),
        () => database.query<{ three: number }>('SELECT 3 AS three', []),
      ),
    );
    expect(rows.map((row) => Number(row.three))).toEqual([3]);
  });

  it('still fails a statement the database does not answer in time, with 503, and serves on', async () => {
    const token = await t.token({ subject: 'timeout' });
    const failure = await database.query('SELECT SLEEP(1)', []).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DatabaseUnavailable);
    const listed = await t.http().get('/plants').set(bearer(token));
    expect(listed.status).toBe(200);
  });
});
