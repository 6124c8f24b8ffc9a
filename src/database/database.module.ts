import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { buildDataSourceOptions } from './data-source';
import { prepareGaleraSessions } from './galera';
import { standAsideEventTriggers } from './event-triggers';
import { runPendingMigrations } from './migrations-runner';
import { serializeSqliteTransactions } from './sqlite-transactions';
import { traceStatements } from './traced-statements';
import { tracingOn } from '../tracing/tracing';

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
  ],
})
export class DatabaseModule {}
