import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/configuration';
import { buildDataSourceOptions } from './src/database/data-source';

/**
 * The TypeORM CLI's data source (`npm run migration:run`, `migration:revert`,
 * `migration:generate -- src/database/migrations/<Name>`), built from the same configuration and
 * options as the service, so both always address the same database.
 */
if (existsSync('.env')) process.loadEnvFile('.env');

export default new DataSource(buildDataSourceOptions(loadConfig(process.env).database));
