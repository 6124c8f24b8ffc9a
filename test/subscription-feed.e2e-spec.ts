import { FEED_POLL_MS } from '../src/webhooks/subscriptions/subscribed-owners';
import { testDatabases } from './utils/databases';
import { watchStatements } from './utils/statements';
import { changesAroundASubscription } from './utils/subscription-promise';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

const onMysql = testDatabases().includes('mysql');
/** Both instances record events; neither delivers them (nothing here is about delivery). */
const ENV = { ...WEBHOOK_TEST_ENV, WEBHOOK_DELIVERY: 'false' };
const ROUNDS = 8;

/**
 * The subscription feed across instances over one MySQL/MariaDB (docs/webhooks.md, "How an event
 * is recorded"): an instance makes an owner's change as the plain statement only while it knows, from
 * a read of the feed at most FEED_KNOWN_FOR_MS old, that the owner has no subscription; and every
 * change asked for after the 201 of `POST /webhooks` on one instance, made on the other, has its event.
 */
(onMysql ? describe : describe.skip)('The subscription feed, on two instances over one MySQL', () => {
  let a: TestApp;
  let b: TestApp;
  /** A prefix of this run's own, so owners left by an earlier run cannot interfere. */
  const run = `feed-${Date.now().toString(36)}`;

  beforeAll(async () => {
    [a, b] = [await startTestApp('mysql', ENV), await startTestApp('mysql', ENV)];
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it(`records every change asked for on one instance after the 201 of a subscription made on the other (${ROUNDS} rounds)`, async () => {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [subscriber, changer] = round % 2 === 0 ? [a, b] : [b, a];
      rounds.push(await changesAroundASubscription(subscriber, changer, `${run}-${round}`));
    }
    expect(rounds.flatMap((round) => round.missing)).toEqual([]);
    // Every round had changes under way on both sides of the 201.
    for (const round of rounds) {
      expect(round.before).toBeGreaterThan(0);
      expect(round.after).toBeGreaterThan(0);
    }
  });

  it("makes the change of an owner known to have no subscription as the plain statement, and a subscriber's with its event", async () => {
    const token = bearer(await a.token({ subject: `${run}-plain` }));
    // The token looked up once (later requests are served from the cache), and b has read the
    // feed since it started, more than once.
    await b.http().get('/plants').set(token).expect(200);
    await new Promise((resolve) => setTimeout(resolve, FEED_POLL_MS * 3));
    const statements: string[] = [];
    const stopWatching = watchStatements('mysql', b, (sql) => statements.push(sql));
    try {
      await b.http().post('/plants').set(token).send({ id: 1, name: 'Plain' }).expect(200);
    } finally {
      stopWatching();
    }
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^INSERT INTO `plants` \([^)]*\) VALUES \(/);
    await a
      .http()
      .post('/webhooks')
      .set(token)
      .send({ url: 'http://127.0.0.1:9/hooks', events: ['plant.deleted'] })
      .expect(201);
    await b.http().delete('/plants/1').set(token).expect(204);
    const events = await b.http().get('/events').set(token).expect(200);
    expect(events.body).toMatchObject([{ type: 'plant.deleted', data: { id: 1 } }]);
  });
});
