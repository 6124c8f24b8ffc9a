import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import { WEBHOOK_TEST_ENV } from './utils/webhook-receiver';

/**
 * The other half of the performance contract (statement-count.e2e-spec.ts counts the SQL): no
 * route runs an interceptor. Nest puts every call of a route with one, even one that only passes
 * the call on, through an Observable pipeline, which costs a create about a tenth of its CPU
 * (docs/performance.md). A library that registers a global interceptor as a side effect (as
 * `ClsModule.forRoot` does) fails this suite rather than going unseen until a benchmark.
 */
describe.each(testDatabases())('Interceptors on every route on %s', (database) => {
  let t: TestApp;
  let token: string;
  let intercept: jest.SpyInstance;
  const counts: number[] = [];

  beforeAll(async () => {
    t = await startTestApp(database, WEBHOOK_TEST_ENV);
    await t.reset();
    token = await t.token({ subject: 'piped' });
    // Nest hands each call of a route to InterceptorsConsumer with the route's interceptors, even
    // when there are none; what it was handed is what the call ran through.
    const original = InterceptorsConsumer.prototype.intercept;
    intercept = jest.spyOn(InterceptorsConsumer.prototype, 'intercept').mockImplementation(function (
      this: InterceptorsConsumer,
      ...args: Parameters<InterceptorsConsumer['intercept']>
    ) {
      counts.push(args[0]?.length ?? 0);
      return original.apply(this, args);
    });
  });
  afterAll(async () => {
    intercept.mockRestore();
    await t.close();
  });
  beforeEach(() => (counts.length = 0));

  it('lists, creates, deletes and manages webhooks with no interceptor', async () => {
    const json = { 'Content-Type': 'application/json' };
    const answers = [
      await t.http().post('/plants').set(bearer(token)).set(json).send('{"id":7,"name":"Piped"}'),
      await t.http().get('/plants').set(bearer(token)),
      await t.http().delete('/plants/7').set(bearer(token)),
      await t.http().get('/webhooks').set(bearer(token)),
      await t.http().get('/health/live'),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 204, 200, 200]);
    expect(counts).toHaveLength(answers.length);
    expect(counts).toEqual(answers.map(() => 0));
  });
});
