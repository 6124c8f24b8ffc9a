import { Provider, Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { DatabaseConfig } from '../../src/config/configuration';
import { DatabaseModule } from '../../src/database/database.module';
import { runPendingMigrations } from '../../src/database/migrations-runner';
import { TestDatabase, prepareDatabase } from './databases';

export interface RepositoryDatabase {
  module: TestingModule;
  dataSource: DataSource;
  get<T>(type: Type<T>): T;
  /** Empties the tables a spec writes, through SQL. */
  clear: (...tables: string[]) => Promise<void>;
  close: () => Promise<void>;
}

/** The service's database settings for a test database. */
export function databaseConfig(db: TestDatabase): DatabaseConfig {
  if (db.name === 'sqlite') return { type: 'sqlite', path: db.env.SQLITE_PATH };
  const url = db.env.DATABASE_URL;
  return {
    type: url.startsWith('mariadb:') ? 'mariadb' : 'mysql',
    url: url.replace(/^mariadb:/, 'mysql:'),
    poolSize: 5,
    connectTimeoutMs: 10_000,
    queryTimeoutMs: 10_000,
  };
}

/**
 * The real DatabaseModule (data source, migrations, Database API, transactions) on a database of the
 * spec's own, with `providers` (the repository under test) on top: what the repository tier runs
 * on, without the rest of the application.
 */
export async function startRepositoryDatabase(
  name: TestDatabase['name'],
  providers: Provider[],
): Promise<RepositoryDatabase> {
  const database = databaseConfig(await prepareDatabase(name));
  const module = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [() => ({ database })] }),
      DatabaseModule,
    ],
    providers,
  }).compile();
  await module.init();
  const dataSource = module.get(DataSource);
  await runPendingMigrations(dataSource, 'post-deployment');
  return {
    module,
    dataSource,
    get: (type) => module.get(type),
    clear: async (...tables) => {
      for (const table of tables) await dataSource.query(`DELETE FROM ${table}`);
    },
    close: () => module.close(),
  };
}

/** The error `promise` rejects with; fails the test when it resolves. */
export function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${String(value)}`);
    },
    (error: unknown) => error,
  );
}
