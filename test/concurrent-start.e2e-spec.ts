import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/configuration';
import { MIGRATIONS, POST_DEPLOYMENT_MIGRATIONS, buildDataSourceOptions } from '../src/database/data-source';
import { MIGRATION_LOCK_TABLE, runPendingMigrations } from '../src/database/migrations-runner';
import { mysqlConnection, testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';
import { expectedPlant } from './utils/bodies';

const onMysql = testDatabases().includes('mysql');

/** A database of its own, dropped and created empty, as a first deployment finds it. */
async function emptyDatabase(suffix: string): Promise<string> {
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  const name = `${url.pathname.slice(1) || 'plantstore_test'}_${suffix}_w${process.env.JEST_WORKER_ID ?? '1'}`;
  const connection = await mysqlConnection(url.toString(), '');
  try {
    await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  } finally {
    await connection.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Instances of a new deployment start together on an empty database: the schema is created once,
 * and every instance serves.
 */
(onMysql ? describe : describe.skip)('Concurrent start on an empty MySQL', () => {
  it('runs each migration exactly once when four data sources migrate at the same moment', async () => {
    const url = await emptyDatabase('race');
    const options = buildDataSourceOptions(loadConfig({ DATABASE_URL: url }).database);
    const sources = await Promise.all(Array.from({ length: 4 }, () => new DataSource(options).initialize()));
    try {
      const outcomes = await Promise.allSettled(sources.map((source) => runPendingMigrations(source)));
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
      const rows = (await sources[0].query('SELECT name FROM migrations')) as { name: string }[];
      expect(rows.map((r) => r.name).sort()).toEqual(MIGRATIONS.map((m) => m.name).sort());
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
    }
  });

  it('takes over the migration lock of an instance that died holding it, once its lease has run out', async () => {
    const url = await emptyDatabase('lease');
    const source = await new DataSource(
      buildDataSourceOptions(loadConfig({ DATABASE_URL: url }).database),
    ).initialize();
    try {
      await runPendingMigrations(source);
      await source.query(
        `INSERT INTO ${MIGRATION_LOCK_TABLE} (name, holder, expires_at) VALUES ('migrations', 'dead', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)`,
      );
      const started = Date.now();
      await runPendingMigrations(source);
      expect(Date.now() - started).toBeLessThan(5000);
      await expect(source.query(`SELECT COUNT(*) AS n FROM ${MIGRATION_LOCK_TABLE}`)).resolves.toEqual([{ n: '0' }]);
    } finally {
      await source.destroy();
    }
  });

  it('starts two instances at once on an empty database; both serve', async () => {
    const url = await emptyDatabase('start');
    let apps: TestApp[] = [];
    try {
      apps = await Promise.all([
        startTestApp('mysql', { DATABASE_URL: url }),
        startTestApp('mysql', { DATABASE_URL: url }),
      ]);
      const token = await apps[0].token({ subject: 'first-deploy' });
      const created = await apps[0]
        .http()
        .post('/plants')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send('{"id":1,"name":"Seedling"}');
      expect(created.status).toBe(200);
      expect((await apps[1].http().get('/plants').set(bearer(token))).body).toEqual([
        expectedPlant({ id: 1, name: 'Seedling' }),
      ]);
      const rows = (await apps[1].dataSource.query('SELECT COUNT(*) AS n FROM migrations')) as { n: unknown }[];
      // Each once: start-up's regular ones, then the post-deployment ones the test apps run as an operator would.
      expect(Number(rows[0].n)).toBe(MIGRATIONS.length + POST_DEPLOYMENT_MIGRATIONS.length);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});
