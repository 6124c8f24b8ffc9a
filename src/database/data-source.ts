import { join } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ApiToken } from '../auth/api-token.entity';
import { DatabaseConfig } from '../config/configuration';
import { IdempotencyKey } from '../idempotency/idempotency-key.entity';
import { Plant } from '../plants/plant.entity';
import { WebhookAttempt } from '../webhooks/deliveries/webhook-attempt.entity';
import { WebhookDelivery } from '../webhooks/deliveries/webhook-delivery.entity';
import { WebhookEventRecord } from '../webhooks/events/webhook-event.entity';
import { WebhookSubscription } from '../webhooks/subscriptions/webhook-subscription.entity';
import { DatabaseLogger } from './database-logger';
import { ExactIntegerDatabase } from './exact-integer-sqlite';
import { migrationsIn } from './migration-files';
import { TimedOutConnectionSubscriber } from './timed-out-connection.subscriber';

/**
 * Every table the migrations make, as it is once they have all run (the migrations' own table and
 * migrations_lock aside): test/schema.e2e-spec.ts holds the two together on both databases, and
 * readiness resolves every column (src/health/schema.health.ts).
 */
export const ENTITIES = [
  Plant,
  ApiToken,
  WebhookSubscription,
  WebhookDelivery,
  WebhookAttempt,
  WebhookEventRecord,
  IdempotencyKey,
];
/**
 * The regular migrations, every one of src/database/migrations/: expand steps, run at start-up
 * (src/database/migrations-runner.ts). Found in their folder (migration-files.ts), in timestamp order.
 */
export const MIGRATIONS = migrationsIn(join(__dirname, 'migrations'));
/**
 * The post-deployment migrations, every one of src/database/migrations/post-deployment/: contract
 * steps, run by `plantstore migrate --post-deployment` once no instance of the previous release serves.
 */
export const POST_DEPLOYMENT_MIGRATIONS = migrationsIn(join(__dirname, 'migrations', 'post-deployment'));

/**
 * The one description of the database, shared by the Nest app, the admin CLI and the TypeORM CLI
 * (ormconfig.ts), so they can never disagree about where the data lives or which schema it has.
 */
export function buildDataSourceOptions(database: DatabaseConfig): DataSourceOptions {
  const common: Pick<
    DataSourceOptions,
    'entities' | 'migrations' | 'migrationsRun' | 'synchronize' | 'logging' | 'logger'
  > = {
    entities: ENTITIES,
    // Every migration, so that any can be shown or reverted; runPendingMigrations() runs the
    // regular ones once the data source is up (under a lock on MySQL), the others when told to.
    migrations: [...MIGRATIONS, ...POST_DEPLOYMENT_MIGRATIONS],
    migrationsRun: false,
    synchronize: false,
    logging: ['warn', 'migration'],
    logger: new DatabaseLogger(),
  };

  if (database.type !== 'sqlite') {
    return {
      ...common,
      type: database.type,
      url: database.url,
      charset: 'utf8mb4_unicode_ci',
      timezone: 'Z',
      // BIGINT as decimal strings: ids beyond 2^53 must not be rounded through a double.
      supportBigNumbers: true,
      bigNumberStrings: true,
      poolSize: database.poolSize,
      connectTimeout: database.connectTimeoutMs,
      // A statement that gets no answer in time fails (and its connection is dropped), so a
      // silent network never holds a request: the client gets 503 and the pool reconnects. In
      // time as the event loop sees it: statement-timeout.ts.
      maxQueryExecutionTime: database.queryTimeoutMs,
      enableQueryTimeout: true,
      subscribers: [TimedOutConnectionSubscriber],
      extra: {
        // mysql2 captures the caller's stack on every statement, to put it on a failure's driver
        // error. TypeORM reports failures as its own QueryFailedError, whose stack is what gets
        // logged, so the capture was never read; it cost about a twentieth of a request's CPU.
        trace: false,
      },
    };
  }

  return {
    ...common,
    type: 'better-sqlite3',
    database: database.path,
    enableWAL: database.path !== ':memory:',
    driver: ExactIntegerDatabase,
  };
}

/**
 * The data source of `options`. SQLite accepts `char(N)` (text, as any type naming characters), and
 * the IdempotencyKeys migration declares one there as on MySQL; TypeORM's SQLite driver does not list
 * the type, so it is told of it, as a type with a length, for the entities to describe that column.
 */
export function createDataSource(options: DataSourceOptions): DataSource {
  const dataSource = new DataSource(options);
  if (options.type === 'better-sqlite3') {
    const driver = dataSource.driver as DataSource['driver'] & { withLengthColumnTypes: string[] };
    driver.supportedDataTypes.push('char');
    driver.withLengthColumnTypes.push('char');
  }
  return dataSource;
}
