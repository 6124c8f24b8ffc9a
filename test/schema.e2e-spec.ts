import { issueFirstRunToken } from '../src/auth/first-run-token';
import { TokensService } from '../src/auth/tokens.service';
import { POST_DEPLOYMENT_MIGRATIONS } from '../src/database/data-source';
import { PreviousReleaseColumnsUnwritten1764500000000 } from '../src/database/migrations/1764500000000-PreviousReleaseColumnsUnwritten';
import { MIGRATION_LOCK_TABLE, pendingMigrations, runPendingMigrations } from '../src/database/migrations-runner';
import { SchemaHealthIndicator } from '../src/health/schema.health';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from '../src/plants/plants.limits';
import { FEED_KNOWN_FOR_MS } from '../src/webhooks/subscriptions/subscribed-owners';
import { expectedEventData } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { undoMigrations } from './utils/migrations';
import { TestApp, bearer, startTestApp } from './utils/test-app';

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

  /** The tables the entities describe. */
  const described = () => t.dataSource.entityMetadatas.map((entity) => entity.tableName).sort();
  /** The database's tables, the migrations' bookkeeping aside. */
  const tablesMade = async () =>
    (
      (await t.dataSource.query(
        database === 'sqlite'
          ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
          : 'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()',
      )) as { name: string }[]
    )
      .map((row) => row.name)
      .filter((name) => name !== 'migrations' && name !== MIGRATION_LOCK_TABLE)
      .sort();

  /**
   * What TypeORM's schema builder would change to make the database what the entities describe:
   * nothing, when they agree. On SQLite a declared type is only a name, and the migrations name some
   * columns as on MySQL (`int`, a `bigint` key; `integer PRIMARY KEY AUTOINCREMENT`, the only kind
   * SQLite counts up) where the entities, written for both, read as another name of the same kind:
   * there each column is compared by what SQLite keeps of it instead.
   */
  const differences = async (): Promise<unknown[]> => {
    if (database === 'mysql') {
      return (await t.dataSource.driver.createSchemaBuilder().log()).upQueries.map((query) => query.query);
    }
    const kind = (type: string) => (/int/i.test(type) ? 'integer' : type);
    const runner = t.dataSource.createQueryRunner();
    try {
      const tables = await runner.getTables(described());
      const schemaSql = Object.fromEntries(
        (
          (await runner.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'")) as {
            name: string;
            sql: string;
          }[]
        ).map((row) => [row.name, row.sql]),
      );
      return t.dataSource.entityMetadatas.flatMap((entity) => {
        const table = tables.find((made) => made.name === entity.tableName);
        if (!table) return [`no table ${entity.tableName}`];
        const describe = (column: {
          name: string;
          type: string;
          length?: string;
          isNullable: boolean;
          isPrimary: boolean;
          isGenerated: boolean;
        }) =>
          `${entity.tableName}.${column.name} ${kind(column.type)}(${column.length ?? ''})` +
          `${column.isNullable ? ' NULL' : ''}${column.isPrimary ? ' PRIMARY' : ''}${column.isGenerated ? ' GENERATED' : ''}`;
        // SQLite counts up an INTEGER PRIMARY KEY declared AUTOINCREMENT, which is never NULL; TypeORM
        // recognises the declaration only with the column's name quoted.
        const counted = (name: string) =>
          new RegExp(`\\b${name}"? integer PRIMARY KEY AUTOINCREMENT`, 'i').test(schemaSql[entity.tableName] ?? '');
        const made = table.columns
          .map((column) =>
            counted(column.name) ? { ...column, isNullable: false, isGenerated: true, type: column.type } : column,
          )
          .map(describe)
          .sort();
        const wanted = entity.columns
          .map((column) =>
            describe({
              name: column.databaseName,
              type: t.dataSource.driver.normalizeType(column),
              length: column.length || undefined,
              isNullable: column.isNullable,
              isPrimary: column.isPrimary,
              isGenerated: column.isGenerated,
            }),
          )
          .sort();
        const indexes = (list: { name?: string; columnNames: string[]; isUnique: boolean }[]) =>
          list
            .map((index) => `${index.name} (${index.columnNames.join(', ')})${index.isUnique ? ' UNIQUE' : ''}`)
            .sort();
        const wantedIndexes = indexes(
          entity.indices.map((index) => ({
            name: index.name,
            columnNames: index.columns.map((column) => column.databaseName),
            isUnique: index.isUnique,
          })),
        );
        return [
          ...made.filter((column) => !wanted.includes(column)).map((column) => `made ${column}`),
          ...wanted.filter((column) => !made.includes(column)).map((column) => `described ${column}`),
          ...indexes(table.indices)
            .filter((index) => !wantedIndexes.includes(index))
            .map((index) => `made index ${index}`),
          ...wantedIndexes
            .filter((index) => !indexes(table.indices).includes(index))
            .map((index) => `described index ${index}`),
        ];
      });
    } finally {
      await runner.release();
    }
  };

  it('is exactly what the entities describe once every migration has run (no migration missing)', async () => {
    await expect(differences()).resolves.toEqual([]);
    await expect(tablesMade()).resolves.toEqual(described());
  });

  it('has every migration applied once the post-deployment ones have run', async () => {
    expect(await t.dataSource.showMigrations()).toBe(false);
  });

  it(`runs the post-deployment migrations at start-up ${database === 'sqlite' ? 'too' : 'only when told'}, and serves either way`, async () => {
    const postDeployment = POST_DEPLOYMENT_MIGRATIONS.map((migration) => migration.name);
    await undoMigrations(t.dataSource, postDeployment);
    await runPendingMigrations(t.dataSource, 'start-up');
    await expect(pendingMigrations(t.dataSource, 'post-deployment')).resolves.toEqual(
      database === 'sqlite' ? [] : postDeployment,
    );
    // Every column this release reads is there before the contract, as readiness checks.
    await expect(t.app.get(SchemaHealthIndicator).check('schema', 5000)).resolves.toEqual({ schema: { status: 'up' } });
    await runPendingMigrations(t.dataSource, 'post-deployment');
    await expect(pendingMigrations(t.dataSource, 'post-deployment')).resolves.toEqual([]);
    await expect(differences()).resolves.toEqual([]);
  });

  it('reverts every migration cleanly and applies them again (npm run migration:revert)', async () => {
    for (let i = 0; i < t.dataSource.migrations.length; i += 1) await t.dataSource.undoLastMigration();
    const all = described();
    const tables = async () =>
      (await t.dataSource.createQueryRunner().getTables(all)).map((table) => table.name.replace(/^.*\./, ''));
    await expect(tables()).resolves.toEqual([]);
    await expect(triggers()).resolves.toEqual([]);
    await t.dataSource.runMigrations();
    expect((await tables()).sort()).toEqual(all);
    // Webhook events are recorded by the service (src/webhooks/events/event-outbox.service.ts): no trigger.
    await expect(triggers()).resolves.toEqual([]);
    await expect(differences()).resolves.toEqual([]);
  });

  it("fills events, data and a public id where a row has only the previous releases' columns", async () => {
    const migrated = t.dataSource.migrations.map((migration) => migration.name);
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

  it('holds the longest plant the API accepts wherever a create writes its name or tag, with a subscriber', async () => {
    await t.reset();
    const token = await t.token({ subject: 'widest' });
    await t.dataSource.query(
      'INSERT INTO webhook_subscriptions (id, public_id, owner, url, events, secret, created_at) ' +
        `VALUES (1, 1, 'widest', 'https://example.com/hook', '["plant.created","plant.deleted"]', 'sealed', 0)`,
    );
    // Made outside POST /webhooks, which would wait this long for every instance to read it.
    await new Promise((resolve) => setTimeout(resolve, FEED_KNOWN_FOR_MS));
    // Four bytes each in UTF-8: the most a character takes in a utf8mb4 column.
    const name = '\u{1F33F}'.repeat(PLANT_NAME_MAX_LENGTH);
    const tag = '\u{1F331}'.repeat(PLANT_TAG_MAX_LENGTH);
    const res = await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ id: 1, name, tag }));
    expect(res.status).toBe(200);
    // Every text column a create wrote the name or the tag to, found by its value, is as wide as the
    // API's bound (SQLite stores longer text than a column declares, so its declared width is read).
    const runner = t.dataSource.createQueryRunner();
    const holding: string[] = [];
    try {
      for (const table of await runner.getTables(described())) {
        for (const column of table.columns.filter((c) => /char|text/i.test(c.type))) {
          for (const [value, bound] of [
            [name, PLANT_NAME_MAX_LENGTH],
            [tag, PLANT_TAG_MAX_LENGTH],
          ] as const) {
            // By their bytes: an ASCII column cannot be compared with a UTF-8 value on MySQL.
            const found = (await runner.query(`SELECT 1 FROM ${table.name} WHERE HEX(${column.name}) = HEX(?)`, [
              value,
            ])) as [];
            if (found.length === 0) continue;
            const table_ = table.name.replace(/^.*\./, '');
            holding.push(`${table_}.${column.name}`);
            const width = column.type === 'text' ? Infinity : Number(column.length);
            expect({ column: `${table_}.${column.name}`, width: Math.min(width, bound) }).toEqual({
              column: `${table_}.${column.name}`,
              width: bound,
            });
          }
        }
      }
    } finally {
      await runner.release();
    }
    expect(holding.sort()).toEqual(['plants.name', 'plants.tag']);
    const [delivery] = (await t.dataSource.query('SELECT data FROM webhook_deliveries')) as { data: string }[];
    expect(JSON.parse(delivery.data)).toEqual(expectedEventData('plant.created', { id: 1, name, tag }));
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
