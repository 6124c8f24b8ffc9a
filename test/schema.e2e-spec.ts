import { TokensService } from '../src/auth/tokens.service';
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

  it('issues a first-run token only while the database has none', async () => {
    await t.reset();
    const tokens = t.app.get(TokensService);
    const first = await tokens.createFirstRunToken();
    expect(first?.token.subject).toBe('developer');
    expect(first?.secret).toMatch(/^pst_/);
    await expect(tokens.createFirstRunToken()).resolves.toBeNull();
  });
});
