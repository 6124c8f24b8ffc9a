import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/configuration';
import { buildDataSourceOptions } from './src/database/data-source';
import { openAtStartup } from './src/database/startup-retry';

/**
 * The TypeORM CLI's data source (`npm run migration:run`, `migration:revert`,
 * `migration:generate -- src/database/migrations/<Name>`), built from the same configuration and
 * options as the service, so both always address the same database.
 */
if (existsSync('.env')) process.loadEnvFile('.env');
const config = loadConfig(process.env);

/** Connects as the service does: each failed attempt reported, for at most DB_STARTUP_TIMEOUT. */
class StartingDataSource extends DataSource {
  override initialize(): Promise<this> {
    return openAtStartup(() => super.initialize(), config.databaseStartup.timeoutMs);
  }
}

export default new StartingDataSource(buildDataSourceOptions(config.database));
