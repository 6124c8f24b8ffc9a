import { INestApplication, Type } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { isInteger, parse, stringify } from 'lossless-json';
import { Writable } from 'node:stream';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { runPendingMigrations } from '../../src/database/migrations-runner';
import { withStatementRetry } from '../../src/database/statement-retry';
import { AppModule } from '../../src/app.module';
import { APP_OPTIONS, configureApp, createHttpAdapter } from '../../src/app.setup';
import { CreateTokenInput, TokensService } from '../../src/auth/tokens.service';
import { loadLogConfig } from '../../src/config/configuration';
import { ENVIRONMENT } from '../../src/config/config.module';
import { LogOutput } from '../../src/logging/log-output';
import { nestLogger } from '../../src/logging/nest-logger';
import { WebhookSubscriptionFeed } from '../../src/webhooks/subscriptions/webhook-subscription-feed.entity';
import { TestDatabase, prepareDatabase } from './databases';
import { recordResponses } from './openapi-contract';

export interface TestApp {
  app: INestApplication;
  db: TestDatabase;
  dataSource: DataSource;
  http: () => ReturnType<typeof request>;
  /** Issues a token straight through the token service, as the CLI does. */
  token: (input: CreateTokenInput) => Promise<string>;
  /** Empties every table, through SQL, never through the API. */
  reset: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * What every test app runs with unless a test says otherwise: no log lines, metrics on a free port,
 * and a rate limit far above what a suite sends (the rate-limit suite sets its own).
 */
export const TEST_ENV: Readonly<Record<string, string>> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  METRICS_PORT: '0',
  RATE_LIMIT_PER_MINUTE: '1000000',
};

/**
 * The real AppModule, configured exactly as main.ts configures it, on a real database. Its
 * configuration is TEST_ENV, the database's variables and `extraEnv`, and nothing else: neither
 * `process.env` nor a `.env` file is read, and neither is written.
 *
 * `logSink`, a stand-in for stdout, gets every line the service logs (at LOG_LEVEL, which TEST_ENV
 * makes silent), through the service's own logger as main.ts sets it up; without it, only Nest's
 * errors are printed. `testControllers` add routes of the test's own beside the API's, for a
 * mechanism that no route of the API uses yet.
 */
export async function startTestApp(
  name: TestDatabase['name'],
  extraEnv: Record<string, string> = {},
  { logSink, testControllers = [] }: { logSink?: Writable; testControllers?: Type[] } = {},
): Promise<TestApp> {
  const db = await prepareDatabase(name);
  const env = { ...TEST_ENV, ...db.env, ...extraEnv };
  let logOutput: LogOutput | undefined;
  if (logSink) {
    logOutput = new LogOutput(loadLogConfig(env), logSink);
  }
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot(logOutput)],
    controllers: testControllers,
  })
    .overrideProvider(ENVIRONMENT)
    .useValue(env)
    .compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(createHttpAdapter(), APP_OPTIONS);
  app.useLogger(logOutput ? nestLogger(logOutput) : ['error']);
  // First, before anything can answer: every response is checked against openapi.json (contract-setup.ts),
  // but those of an app with routes of a test's own, which openapi.json does not describe.
  if (testControllers.length === 0) app.use(recordResponses());
  configureApp(app);
  await app.init();

  const dataSource = app.get(DataSource);
  // The schema of a finished upgrade: start-up ran the regular migrations, an operator the rest.
  // An app that fails here is closed, or its pollers would go on under the tests that follow.
  await runPendingMigrations(dataSource, 'post-deployment').catch(async (error: unknown) => {
    await app.close().catch(() => undefined);
    throw error;
  });
  const tokens = app.get(TokensService);
  return {
    app,
    db,
    dataSource,
    http: () => request(app.getHttpServer()),
    token: async (input) => (await tokens.create(input)).secret,
    reset: async () => {
      for (const { tableName } of dataSource.entityMetadatas) {
        // The feed's version only rises: the app's instances have read up to it (SubscribedOwners).
        // The app's pollers run beside it: a DELETE that meets one in a deadlock is run again, as
        // the service runs its own statements.
        if (tableName !== dataSource.getMetadata(WebhookSubscriptionFeed).tableName)
          await withStatementRetry(() => dataSource.query(`DELETE FROM ${tableName}`), { readOnly: false });
      }
    },
    close: () => app.close(),
  };
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Every non-2xx answer: JSON, `{ error: <status>, message }`, nothing else. */
export function expectErrorBody(res: request.Response, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error: status, message: expect.any(String) });
  expect(res.body.message.length).toBeGreaterThan(0);
}

/** Reads a response body keeping integers exact (BigInt), as a careful client would. */
export function exactJson<T = unknown>(res: request.Response): T {
  return parse(res.text, undefined, (n: string) => (isInteger(n) ? BigInt(n) : Number(n))) as T;
}

/** Writes a body with BigInt values as plain JSON numbers. */
export function jsonText(body: unknown): string {
  return stringify(body) as string;
}
