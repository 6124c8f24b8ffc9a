import type { Pool, PoolConnection, QueryError } from 'mysql2';
import { DataSource, QueryFailedError } from 'typeorm';

/** mysql2's answer to a statement: the rows of a read, a header with the rows changed of a write. */
type Answer = Record<string, unknown>[] | { affectedRows?: number; insertId?: number | string };

/** What a caller wants of a statement's answer: its rows, how many rows it changed, or that and the key it generated. */
export type Want = 'rows' | 'affected' | 'inserted';

/** An INSERT's answer: the rows it inserted and the key the database generated for it, if any. */
export interface Inserted {
  affected: number;
  id?: bigint;
}

/** A generated key as a driver reports it (a number, a decimal string, a bigint), or undefined for none. */
export function generatedKey(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value > 0n ? value : undefined;
  if (typeof value === 'number' || typeof value === 'string') {
    const key = BigInt(value);
    return key > 0n ? key : undefined;
  }
  return undefined;
}

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

  /** The statement's rows, how many rows it changed, or that and its generated key, as `want` says. */
  run(sql: string, parameters: unknown[], want: Want): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.pool.getConnection((error, connection) => {
        if (error) return reject(error);
        this.send(connection, sql, parameters, (failure, answer) => {
          if (failure) reject(failure);
          else resolve(PooledStatements.read(answer!, want));
        });
      });
    });
  }

  private static read(answer: Answer, want: Want): unknown {
    if (want === 'rows') return answer;
    const header = answer as { affectedRows?: number; insertId?: number | string };
    const affected = Number(header.affectedRows ?? 0);
    return want === 'affected' ? affected : ({ affected, id: generatedKey(header.insertId) } satisfies Inserted);
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
