import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, createConnection } from 'mysql2/promise';

export interface TestDatabase {
  name: 'sqlite' | 'mysql';
  /** Environment for the service under test: where its database lives. */
  env: Record<string, string>;
}

/**
 * Every e2e suite runs on SQLite, and on MySQL/MariaDB when TEST_DATABASE_URL is set.
 * TEST_REQUIRE_MYSQL=1 (set by CI) turns a missing TEST_DATABASE_URL into a failure, so the MySQL
 * runs can never be skipped silently. TEST_DATABASES=mysql keeps the MySQL runs alone: for a run
 * against another server (the Galera cluster behind HAProxy in CI) after the suite has run on both.
 */
export function testDatabases(): TestDatabase['name'][] {
  const url = process.env.TEST_DATABASE_URL;
  if (!url && process.env.TEST_REQUIRE_MYSQL === '1') {
    throw new Error('TEST_REQUIRE_MYSQL=1 but TEST_DATABASE_URL is not set');
  }
  const names: TestDatabase['name'][] = url ? ['sqlite', 'mysql'] : ['sqlite'];
  const only = process.env.TEST_DATABASES?.split(',').map((name) => name.trim());
  if (only === undefined) return names;
  const unknown = only.filter((name) => !names.includes(name as TestDatabase['name']));
  if (unknown.length > 0) throw new Error(`TEST_DATABASES names ${unknown.join(', ')}, which this run has not`);
  return names.filter((name) => only.includes(name));
}

/**
 * A database of its own for one test file (a fresh SQLite file, or one MySQL database per jest
 * worker), so files running in parallel never clean each other's tables.
 */
export async function prepareDatabase(name: TestDatabase['name']): Promise<TestDatabase> {
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-e2e-'));
    return { name, env: { SQLITE_PATH: join(dir, 'test.sqlite'), DATABASE_URL: '' } };
  }
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  const database = `${url.pathname.slice(1) || 'plantstore_test'}_w${process.env.JEST_WORKER_ID ?? '1'}`;
  const connection = await mysqlConnection(url.toString(), '');
  try {
    // Created only when missing: CREATE DATABASE, even of one that exists, waits while another
    // session holds a table of it locked (LOCK TABLES); the worker's database is created once and
    // then used by every spec it runs.
    const [found] = await connection.query('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [
      database,
    ]);
    if ((found as unknown[]).length === 0) {
      await connection.query(`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4`);
    }
  } finally {
    await connection.end();
  }
  url.pathname = `/${database}`;
  return { name, env: { DATABASE_URL: url.toString(), SQLITE_PATH: '' } };
}

/** A connection of the test's own to the MySQL server of `url`, in its database unless told otherwise. */
export function mysqlConnection(url: string, database = new URL(url).pathname.slice(1)): Promise<Connection> {
  const parsed = new URL(url);
  return createConnection({
    host: parsed.hostname,
    port: Number(parsed.port || 3306),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: database || undefined,
  });
}
