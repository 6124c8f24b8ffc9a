import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { buildDataSourceOptions } from './data-source';
import { Database } from './database';
import { prepareGaleraSessions } from './galera';
import { standAsideEventTriggers } from './event-triggers';
import { runPendingMigrations } from './migrations-runner';
import { serializeSqliteTransactions } from './sqlite-transactions';
import { traceStatements } from './traced-statements';
import { tracingOn } from '../tracing/tracing';

@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) =>
        buildDataSourceOptions(config.get('database', { infer: true })),
      // Every start brings the schema up to date before the first request is served.
      dataSourceFactory: async (options) => {
        const dataSource = await new DataSource(options!).initialize();
        try {
          if (tracingOn()) await traceStatements(dataSource);
          serializeSqliteTransactions(dataSource);
          // Before the migrations: their reads of the migrations table must be causal too.
          await prepareGaleraSessions(dataSource);
          await runPendingMigrations(dataSource);
          await standAsideEventTriggers(dataSource);
        } catch (error) {
          // Close it, so a retried start does not leave this pool behind.
          await dataSource.destroy();
          throw error;
        }
        return dataSource;
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
