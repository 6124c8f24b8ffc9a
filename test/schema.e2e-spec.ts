import { issueFirstRunToken } from '../src/auth/first-run-token';
import { TokensService } from '../src/auth/tokens.service';
import { MIGRATIONS } from '../src/database/data-source';
import { PreviousReleaseColumnsUnwritten1764500000000 } from '../src/database/migrations/1764500000000-PreviousReleaseColumnsUnwritten';
import { testDatabases } from './utils/databases';
import { TestApp, startTestApp } from './utils/test-app';

describe.each(testDatabases())('Schema on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(database);
  });
  afterAll(() => t.close());

  const triggers = async () =>
    (
      (await t.dataSource.query(
        database === 'sqlite'
          ? "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
          : 'SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME',
      )) as { name: string }[]
    ).map((row) => row.name);

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
    await expect(tables()).resolves.toEqual([]);
    await expect(triggers()).resolves.toEqual([]);
    await t.dataSource.runMigrations();
    expect((await tables()).sort()).toEqual(all);
    // Webhook events are recorded by the service (src/webhooks/event-outbox.service.ts): no trigger.
    await expect(triggers()).resolves.toEqual([]);
    const pending = await t.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries).toEqual([]);
  });

  it("fills events, data and a public id where a row has only the previous releases' columns", async () => {
    const migrated = MIGRATIONS.map((migration) => migration.name);
    const expand = migrated.indexOf(PreviousReleaseColumnsUnwritten1764500000000.name);
    for (let i = expand; i < migrated.length; i += 1) await t.dataSource.undoLastMigration();
    const key = 2n ** 60n + 3n;
    const flagsOnly =
      'INSERT INTO webhook_subscriptions (id, owner, url, on_created, on_deleted, secret, created_at) ' +
      "VALUES (?, 'legacy', 'https://example.com/hook', ?, ?, 'sealed', 0)";
    await t.dataSource.query(flagsOnly, [key, 1, 0]);
    await t.dataSource.query(flagsOnly, [7, 1, 1]);
    const plantColumnsOnly =
      'INSERT INTO webhook_deliveries (subscription_id, event_type, plant_id, plant_name, plant_tag, occurred_at, ' +
      "state, attempts, next_attempt_at) VALUES (?, ?, ?, ?, ?, 0, 'pending', 0, 0)";
    await t.dataSource.query(plantColumnsOnly, [key, 'plant.created', key, 'Fern "6" \u{1F33F}', null]);
    await t.dataSource.query(plantColumnsOnly, [key, 'plant.created', 1, 'Ivy', 'green']);
    await t.dataSource.query(plantColumnsOnly, [key, 'plant.deleted', key, null, null]);
    if (database === 'mysql') {
      // Where the release that recorded events with triggers created the database.
      await t.dataSource.query(
        'CREATE TRIGGER plants_webhook_created AFTER INSERT ON plants FOR EACH ROW SET @seen = 1',
      );
    }

    await t.dataSource.runMigrations();

    await expect(triggers()).resolves.toEqual([]);

    const subscriptions = (await t.dataSource.query(
      "SELECT id, public_id, events FROM webhook_subscriptions WHERE owner = 'legacy' ORDER BY id",
    )) as { id: unknown; public_id: unknown; events: string }[];
    expect(subscriptions.map((row) => [String(row.id), row.events])).toEqual([
      ['7', '["plant.created","plant.deleted"]'],
      [String(key), '["plant.created"]'],
    ]);
    expect(String(subscriptions[0].public_id)).toBe('7');
    expect(BigInt(String(subscriptions[1].public_id))).toBeLessThanOrEqual(BigInt(Number.MAX_SAFE_INTEGER));
    const deliveries = (await t.dataSource.query(
      'SELECT data FROM webhook_deliveries WHERE subscription_id = ? ORDER BY id',
      [key],
    )) as { data: string }[];
    expect(deliveries.map((row) => row.data)).toEqual([
      `{"id":${key},"name":"Fern \\"6\\" \u{1F33F}"}`,
      '{"id":1,"name":"Ivy","tag":"green"}',
      `{"id":${key}}`,
    ]);
    await t.dataSource.query('DELETE FROM webhook_deliveries WHERE subscription_id = ?', [key]);
    await t.dataSource.query("DELETE FROM webhook_subscriptions WHERE owner = 'legacy'");
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
