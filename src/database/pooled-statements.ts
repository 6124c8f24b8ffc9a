import type { Pool, PoolConnection, QueryError } from 'mysql2';
import { DataSource, QueryFailedError } from 'typeorm';

/** mysql2's answer to a statement: the rows of a read, a header with the rows changed of a write. */
type Answer = Record<string, unknown>[] | { affectedRows?: number };

/**
 * Autocommit statements on MySQL/MariaDB, sent straight to the pool TypeORM opened: a statement
 * outside a transaction needs none of what a query runner adds around it (a runner object, its
 * event broadcasts, a promise wrapper of the connection per call), which cost a list request about
 * as much CPU as mysql2 itself (docs/performance.md). They go as text, as the query runner sends
 * them: as prepared statements (mysql2's `execute`) every BIGINT of a row arrives in binary and is
 * turned into its decimal text by a 64-bit integer library, which cost more than the parse saved. What the runner does that matters is done here alike: the statement
 * timeout (DB_QUERY_TIMEOUT_MS), a connection that timed out destroyed rather than returned to the
 * pool (mysql2 would queue later statements behind the lost reply), slow statements logged by the
 * data source's logger, failures as TypeORM's QueryFailedError with the driver's error inside, and
 * a failure to get a connection as the driver's bare error (retry.ts tells the two apart).
 */
export class PooledStatements {
  private constructor(
    private readonly dataSource: DataSource,
    private readonly pool: Pool,
    private readonly timeoutMs: number | undefined,
  ) {}

  /** The data source's pool when it has one (MySQL/MariaDB); undefined for SQLite. */
  static of(dataSource: DataSource): PooledStatements | undefined {
    const pool = (dataSource.driver as unknown as { pool?: Pool }).pool;
    if (!pool) return undefined;
    const options = dataSource.driver.options as { maxQueryExecutionTime?: number; enableQueryTimeout?: boolean };
    const timeout = options.enableQueryTimeout ? options.maxQueryExecutionTime : undefined;
    return new PooledStatements(dataSource, pool, timeout);
  }

  /** The statement's rows, or with `affected` how many rows it changed. */
  run(sql: string, parameters: unknown[], affected: boolean): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.pool.getConnection((error, connection) => {
        if (error) return reject(error);
        this.send(connection, sql, parameters, (failure, answer) => {
          if (failure) reject(failure);
          else resolve(affected ? Number((answer as { affectedRows?: number }).affectedRows ?? 0) : answer);
        });
      });
    });
  }

  private send(
    connection: PoolConnection,
    sql: string,
    parameters: unknown[],
    done: (failure: unknown, answer?: Answer) => void,
  ): void {
    const started = Date.now();
    connection.query({ sql, timeout: this.timeoutMs }, parameters, (error: QueryError | null, answer: unknown) => {
      const took = Date.now() - started;
      if (this.timeoutMs !== undefined && took > this.timeoutMs) {
        this.dataSource.logger.logQuerySlow(took, sql, parameters);
      }
      if (error?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
      else connection.release();
      if (error) done(new QueryFailedError(sql, parameters, error));
      else done(null, answer as Answer);
    });
  }
}
