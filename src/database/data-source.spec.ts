import { ApiToken } from '../auth/api-token.entity';
import { Plant } from '../plants/plant.entity';
import { ENTITIES, MIGRATIONS, POST_DEPLOYMENT_MIGRATIONS, buildDataSourceOptions } from './data-source';
import { ExactIntegerDatabase } from './exact-integer-sqlite';

describe(buildDataSourceOptions.name, () => {
  it('never synchronizes the schema; migrations are left to runPendingMigrations', () => {
    for (const options of [
      buildDataSourceOptions({ type: 'sqlite', path: 'data/x.sqlite' }),
      buildDataSourceOptions({
        type: 'mysql',
        url: 'mysql://root@localhost/test',
        poolSize: 10,
        connectTimeoutMs: 5000,
        queryTimeoutMs: 5000,
      }),
    ]) {
      expect(options).toMatchObject({
        synchronize: false,
        migrationsRun: false,
        entities: ENTITIES,
        migrations: [...MIGRATIONS, ...POST_DEPLOYMENT_MIGRATIONS],
      });
    }
    expect(ENTITIES).toEqual(expect.arrayContaining([Plant, ApiToken]));
    expect(MIGRATIONS.length).toBeGreaterThan(0);
  });

  it.each(['mysql', 'mariadb'] as const)('reads BIGINT as exact strings on %s, in UTC and utf8mb4', (type) => {
    expect(
      buildDataSourceOptions({
        type,
        url: 'mysql://app:pw@db:3306/plants',
        poolSize: 7,
        connectTimeoutMs: 2500,
        queryTimeoutMs: 3000,
      }),
    ).toMatchObject({
      type,
      url: 'mysql://app:pw@db:3306/plants',
      charset: 'utf8mb4_unicode_ci',
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: true,
      poolSize: 7,
      connectTimeout: 2500,
      // Each statement gives up after the query timeout (mysql2's per-query timeout).
      maxQueryExecutionTime: 3000,
      enableQueryTimeout: true,
    });
  });

  it('opens a SQLite file with WAL through the exact-integer driver', () => {
    const options = buildDataSourceOptions({ type: 'sqlite', path: 'data/x.sqlite' });
    expect(options).toMatchObject({ type: 'better-sqlite3', database: 'data/x.sqlite', enableWAL: true });
    expect((options as { driver?: unknown }).driver).toBe(ExactIntegerDatabase);
  });

  it('does not ask for WAL on an in-memory database', () => {
    expect(buildDataSourceOptions({ type: 'sqlite', path: ':memory:' })).toMatchObject({
      database: ':memory:',
      enableWAL: false,
    });
  });
});
