import { issueFirstRunToken } from '../src/auth/first-run-token';
import { TokensService } from '../src/auth/tokens.service';
import { MIGRATIONS } from '../src/database/data-source';
import { testDatabases } from './utils/databases';
import { TestApp, startTestApp } from './utils/test-app';

describe.each(testDatabases())('Schema on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(database);
  });
  afterAll(() => t.close());

  it('is exactly what the entities describe once the migrations have run (no migration missing)', async () => {
    const pending = await t.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('has every migration applied at start-up', async () => {
    expect(await t.dataSource.showMigrations()).toBe(false);
  });

  it('reverts every migration cleanly and applies them again (npm run migration:revert)', async () => {
    for (let i = 0; i < MIGRATIONS.length; i += 1) await t.dataSource.undoLastMigration();
    const all = [
      'api_tokens',
      'idempotency_keys',
      'plants',
      'webhook_attempts',
      'webhook_deliveries',
      'webhook_subscriptions',
    ];
    const tables = async () =>
      (await t.dataSource.createQueryRunner().getTables(all)).map((table) => table.name.replace(/^.*\./, ''));
    const triggers = async () =>
      (
        (await t.dataSource.query(
          database === 'sqlite'
            ? "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
            : 'SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME',
        )) as { name: string }[]
      ).map((row) => row.name);
    await expect(tables()).resolves.toEqual([]);
    await expect(triggers()).resolves.toEqual([]);
    await t.dataSource.runMigrations();
    expect((await tables()).sort()).toEqual(all);
    // Webhook events are recorded by the service (src/webhooks/event-outbox.service.ts): no trigger.
    await expect(triggers()).resolves.toEqual([]);
    const pending = await t.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries).toEqual([]);
  });

  it('keeps token times to the millisecond, so a token expires when it was said to', async () => {
    const tokens = t.app.get(TokensService);
    const { token } = await tokens.create({ subject: 'timer', scopes: ['plants:read'], expiresInMs: 60_234 });
    const stored = (await tokens.list()).find((listed) => listed.id === token.id);
    expect(stored?.createdAt.toISOString()).toBe(token.createdAt.toISOString());
    expect(stored?.expiresAt?.toISOString()).toBe(token.expiresAt?.toISOString());
  });

  if (database === 'sqlite') {
    it('issues a development token on an empty embedded database, once', async () => {
      await t.reset();
      const first = await issueFirstRunToken(t.app);
      expect(first?.token.subject).toBe('developer');
      expect(first?.secret).toMatch(/^pst_/);
      await expect(t.app.get(TokensService).authenticate(first!.secret)).resolves.toMatchObject({
        subject: 'developer',
      });
      await expect(issueFirstRunToken(t.app)).resolves.toBeNull();
    });

    it('never issues one in production', async () => {
      const production = await startTestApp('sqlite', { NODE_ENV: 'production' });
      try {
        await production.reset();
        await expect(issueFirstRunToken(production.app)).resolves.toBeNull();
        await expect(production.app.get(TokensService).list()).resolves.toEqual([]);
      } finally {
        await production.close();
      }
    });
  } else {
    it('never issues one on a shared MySQL database', async () => {
      await t.reset();
      await expect(issueFirstRunToken(t.app)).resolves.toBeNull();
      await expect(t.app.get(TokensService).list()).resolves.toEqual([]);
    });
  }
});
