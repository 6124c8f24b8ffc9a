import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { CannotExecuteNotConnectedError, DataSource, EntityManager, QueryRunner } from 'typeorm';
import { PooledStatements } from './pooled-statements';
import { RetryOptions, withStatementRetry } from './statement-retry';

export type Dialect = 'mysql' | 'sqlite';

export type IsolationLevel = 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/** What differs between the two databases, written once for each. */
export interface PerDialect<T> {
  readonly mysql: T;
  readonly sqlite: T;
}

/** SQL the same on both databases, or each one's own text. */
export type Statement = string | PerDialect<string>;

/**
 * Epoch milliseconds now on the database's clock, so every instance judges leases, expiry and due
 * times alike.
 */
export const NOW_MS: PerDialect<string> = {
  mysql: 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)',
  sqlite: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
};

/** Both dialects' text of a statement that differs only in where it reads the clock. */
export function withNow(build: (now: string) => string): PerDialect<string> {
  return { mysql: build(NOW_MS.mysql), sqlite: build(NOW_MS.sqlite) };
}

/** A read, or any statement without effects: run again after a failure that left nothing applied. */
export const READ: RetryOptions = { readOnly: true };
/** A write (or a whole transaction): run again only when it certainly did not take effect. */
export const WRITE: RetryOptions = { readOnly: false };

export interface TransactionOptions {
  /** Run the whole transaction again after a failure that rolled it back (a deadlock, a lost certification). */
  retry?: RetryOptions;
  /**
   * The isolation level the work needs. A transaction inside another runs at the outer one's level:
   * asking there for another level than it has is a programming error, and fails.
   */
  isolation?: PerDialect<IsolationLevel>;
}

/**
 * The level of a transaction whose reads should take no locks (an INSERT ... SELECT then locks no
 * row it reads): what the webhook outbox records events at, and so every transaction that may
 * contain a plant change (an idempotent request's).
 */
export const READ_COMMITTED: PerDialect<IsolationLevel> = { mysql: 'READ COMMITTED', sqlite: 'SERIALIZABLE' };

/** The level of a transaction that asked for none: each database's default. */
const DEFAULT_ISOLATION: PerDialect<IsolationLevel> = { mysql: 'REPEATABLE READ', sqlite: 'SERIALIZABLE' };

/** A transaction asked for an isolation level that the transaction it runs inside does not have. */
export class IsolationMismatch extends Error {
  constructor(outer: IsolationLevel, inner: IsolationLevel) {
    super(`A transaction at ${inner} cannot run inside one at ${outer}: open the outer one at ${inner}`);
  }
}

export type Row = Record<string, unknown>;

/** A condition another part of the service adds to a statement's WHERE clause, with its parameters. */
export interface Condition {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * The one way repositories reach the database. A statement runs through a TypeORM query runner, so
 * pooling, the query timeout, the query logger and the connection subscribers apply to all of them.
 * Inside `transaction()` every statement sent through here, from whichever service or repository,
 * runs on that transaction (its context travels with the call, not as a parameter) and is never
 * retried on its own; outside, each is one autocommit statement, retried as `retry` allows. Once
 * the data source is closed (shutting down) the drivers fail in ways of their own (a TypeError on
 * SQLite): every call then fails with TypeORM's not-connected error, which the exception filter
 * answers 503 like a database that cannot be reached.
 */
@Injectable()
export class Database {
  readonly dialect: Dialect;
  /** Where autocommit statements go on MySQL/MariaDB; SQLite's go through a query runner. */
  private pooled?: PooledStatements | null;
  /** The isolation level of each open transaction, by its query runner. */
  private readonly isolations = new WeakMap<QueryRunner, IsolationLevel>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.dialect = dataSource.options.type === 'better-sqlite3' ? 'sqlite' : 'mysql';
  }

  /** This database's value of a per-dialect pair (or the plain statement). */
  sql(statement: Statement): string {
    return typeof statement === 'string' ? statement : statement[this.dialect];
  }

  /** The rows a statement returns. */
  query<R = Row>(statement: Statement, parameters: unknown[], retry?: RetryOptions): Promise<R[]> {
    return this.send(this.sql(statement), parameters, false, retry) as Promise<R[]>;
  }

  /** How many rows a statement changed, as each driver reports it. */
  execute(statement: Statement, parameters: unknown[], retry?: RetryOptions): Promise<number> {
    return this.send(this.sql(statement), parameters, true, retry) as Promise<number>;
  }

  /**
   * Statements TypeORM builds from entities (for tables whose statements are few), on the open
   * transaction's manager when there is one.
   */
  async entities<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await work(this.transactions.tx);
    } catch (error) {
      throw this.unavailableOr(error);
    }
  }

  /**
   * Runs `work` as one transaction. A transaction opened inside another one is a savepoint of it:
   * when its work fails, what it wrote is undone and the outer one goes on or fails as it decides.
   * The outermost decides the isolation (an inner one may only ask for the same) and runs
   * everything again, never a statement or an inner transaction on its own.
   */
  transaction<T>(work: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (this.transactions.isTransactionActive()) return this.runSavepoint(work, options.isolation);
    const run = () => this.runTransaction(work, options.isolation);
    return options.retry ? withStatementRetry(run, options.retry) : run();
  }

  private async runTransaction<T>(work: () => Promise<T>, isolation?: PerDialect<IsolationLevel>): Promise<T> {
    const level = (isolation ?? DEFAULT_ISOLATION)[this.dialect];
    const opened = async () => {
      this.isolations.set(this.transactions.tx.queryRunner!, level);
      return work();
    };
    try {
      return await (isolation
        ? this.transactions.withTransaction({ isolationLevel: level }, opened)
        : this.transactions.withTransaction(opened));
    } catch (error) {
      throw this.unavailableOr(error);
    }
  }

  private async runSavepoint<T>(work: () => Promise<T>, isolation?: PerDialect<IsolationLevel>): Promise<T> {
    const outer = this.transactions.tx.queryRunner!;
    const level = this.isolations.get(outer) ?? DEFAULT_ISOLATION[this.dialect];
    if (isolation && isolation[this.dialect] !== level) throw new IsolationMismatch(level, isolation[this.dialect]);
    try {
      return await this.transactions.withTransaction(Propagation.Nested, work);
    } catch (error) {
      throw this.unavailableOr(error);
    }
  }

  private send(sql: string, parameters: unknown[], affected: boolean, retry?: RetryOptions): Promise<unknown> {
    if (this.transactions.isTransactionActive()) {
      return this.run(this.transactions.tx.queryRunner!, sql, parameters, affected);
    }
    return retry
      ? withStatementRetry(() => this.run(undefined, sql, parameters, affected), retry)
      : this.run(undefined, sql, parameters, affected);
  }

  /** On the transaction's runner, or on one of its own that goes back to the pool after the statement. */
  private async run(
    transaction: QueryRunner | undefined,
    sql: string,
    parameters: unknown[],
    affected: boolean,
  ): Promise<unknown> {
    try {
      if (transaction === undefined) {
        // Looked up on first use: the pool exists once the data source is initialized.
        this.pooled ??= PooledStatements.of(this.dataSource) ?? null;
        if (this.pooled) return await this.pooled.run(sql, parameters, affected);
      }
      const runner = transaction ?? this.dataSource.createQueryRunner();
      try {
        const result = await runner.query(sql, parameters, true);
        return affected ? Number(result.affected ?? 0) : result.records;
      } finally {
        if (!transaction) await runner.release();
      }
    } catch (error) {
      throw this.unavailableOr(error);
    }
  }

  private unavailableOr(error: unknown): unknown {
    return this.dataSource.isInitialized ? error : new CannotExecuteNotConnectedError();
  }
}
