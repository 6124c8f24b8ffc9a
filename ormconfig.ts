import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { loadConfig } from './src/config/configuration';
import { buildDataSourceOptions, createDataSource } from './src/database/data-source';
import { openAtStartup } from './src/database/startup-retry';

/**
 * The TypeORM CLI's data source (`npm run migration:run`, `migration:revert`,
 * `migration:generate -- src/database/migrations/<Name>`), built from the same configuration and
 * options as the service, so both always address the same database.
 */
if (existsSync('.env')) process.loadEnvFile('.env');
const config = loadConfig(process.env);

/** Connects as the service does: each failed attempt reported, for at most DB_STARTUP_TIMEOUT. */
const dataSource = createDataSource(buildDataSourceOptions(config.database));
const initialize = dataSource.initialize.bind(dataSource);
dataSource.initialize = () => openAtStartup(initialize, config.databaseStartup.timeoutMs);

export default dataSource;
