import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule, TypeOrmModuleOptions, getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { buildDataSourceOptions, createDataSource } from './data-source';
import { Database } from './database';
import { prepareGaleraSessions } from './galera';
import { runPendingMigrations } from './migrations-runner';
import { serializeSqliteTransactions } from './sqlite-transactions';
import { openAtStartup } from './startup-retry';
import { timeStatementsByTheLoop } from './statement-timeout';
import { traceStatements } from './traced-statements';
import { tracingOn } from '../tracing/tracing';

/** The data source's options, with how long a start may wait for the database (DB_STARTUP_TIMEOUT). */
type StartupOptions = TypeOrmModuleOptions & { startupTimeoutMs: number };

/** Opens the data source and prepares it to serve: on a failure it is closed again, so a retry leaves no pool behind. */
async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = await createDataSource(options).initialize();
  try {
    if (tracingOn()) await traceStatements(dataSource);
    serializeSqliteTransactions(dataSource);
    timeStatementsByTheLoop(dataSource);
    // Before the migrations: their reads of the migrations table must be causal too.
    await prepareGaleraSessions(dataSource);
    await runPendingMigrations(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>): StartupOptions => {
        return {
          ...buildDataSourceOptions(config.get('database', { infer: true })),
          startupTimeoutMs: config.get('databaseStartup.timeoutMs', { infer: true }),
          // Retried by openAtStartup alone, for DB_STARTUP_TIMEOUT, never also by TypeOrmModule's own loop.
          toRetry: () => false,
        };
      },
      // Every start brings the schema up to date before the first request is served.
      dataSourceFactory: (options) => {
        const { startupTimeoutMs, ...dataSourceOptions } = options as StartupOptions;
        return openAtStartup(() => openDataSource(dataSourceOptions as DataSourceOptions), startupTimeoutMs);
      },
    }),
    // The transactional plugin alone, without ClsModule.forRoot: forRoot also registers a global
    // guard and interceptor (no-ops unless mounted), and one global interceptor puts every request
    // of every route through an Observable pipeline. A context exists only while a transaction is
    // open (`@Transactional()` opens its own), so requests that open none pay nothing for it.
    ClsModule.registerPlugins([
      new ClsPluginTransactional({
        adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
      }),
    ]),
  ],
  providers: [Database],
  exports: [Database],
})
export class DatabaseModule {}
