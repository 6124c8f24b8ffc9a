import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, ObjectLiteral, QueryRunner } from 'typeorm';
import { DatabaseUnavailable } from '../common/filters/server.errors';
import { isDatabaseUnavailable } from './database-errors';
import { EntityTable } from './entity-table';
import { Inserted, PooledStatements, Want, generatedKey } from './pooled-statements';
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
 * The one way repositories reach the database. Inside `transaction()` every statement sent through
 * here, from whichever service or repository, runs on that transaction's TypeORM query runner (its
 * context travels with the call, not as a parameter) and is never retried on its own; outside, each
 * is one autocommit statement (on MySQL/MariaDB sent straight to the pool: PooledStatements),
 * retried as `retry` allows. A call that fails because the database cannot serve (or because the
 * data source is closed, shutting down) fails with DatabaseUnavailable, which the exception filter
 * answers 503 like any HttpException; other failures (a duplicate key) leave as the driver raised
 * them.
 */
@Injectable()
export class Database {
  readonly dialect: Dialect;
  /** Where autocommit statements go on MySQL/MariaDB; SQLite's go through a query runner. */
  private pooled?: PooledStatements | null;
  /** The isolation level of each open transaction, by its query runner. */
  private readonly isolations = new WeakMap<QueryRunner, IsolationLevel>();
  /** What each open transaction runs once it has committed (afterCommit), by its query runner. */
  private readonly committed = new WeakMap<QueryRunner, (() => Promise<void>)[]>();

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

  /**
   * An entity's table as a repository's statements need it (EntityTable): statements made from the
   * entity's metadata and TypeORM's query builder, for the repository to compile once, and the
   * conversions of its values. Sent, like any statement, through query(), execute() or insert().
   */
  table<E extends ObjectLiteral>(entity: new () => E): EntityTable<E> {
    return new EntityTable(this.dataSource, entity);
  }

  /** The rows a statement returns. */
  query<R = Row>(statement: Statement, parameters: unknown[], retry?: RetryOptions): Promise<R[]> {
    return this.send(this.sql(statement), parameters, 'rows', retry) as Promise<R[]>;
  }

  /** How many rows a statement changed, as each driver reports it. */
  execute(statement: Statement, parameters: unknown[], retry?: RetryOptions): Promise<number> {
    return this.send(this.sql(statement), parameters, 'affected', retry) as Promise<number>;
  }

  /**
   * An INSERT of one row (or none: an INSERT ... SELECT whose condition failed): how many it
   * inserted, and the key the database generated for it.
   */
  insert(statement: Statement, parameters: unknown[], retry?: RetryOptions): Promise<Inserted> {
    return this.send(this.sql(statement), parameters, 'inserted', retry) as Promise<Inserted>;
  }

  /**
   * Runs `work` as one transaction. A transaction opened inside another one is a savepoint of it:
   * when its work fails, what it wrote is undone and the outer one goes on or fails as it decides.
   * The outermost decides the isolation (an inner one may only ask for the same) and runs
   * everything again, never a statement or an inner transaction on its own.
   */
  async transaction<T>(work: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (this.transactions.isTransactionActive()) return this.runSavepoint(work, options.isolation);
    const afterwards: (() => Promise<void>)[] = [];
    const run = () => {
      afterwards.length = 0;
      return this.runTransaction(work, afterwards, options.isolation);
    };
    let result: T;
    try {
      result = await (options.retry ? withStatementRetry(run, options.retry) : run());
    } catch (error) {
      throw this.named(error);
    }
    // Committed: never run again for what follows.
    for (const then of afterwards) await then();
    return result;
  }

  /**
   * Runs `then` once what has been written so far is committed, and resolves when it has run:
   * outside a transaction at once; inside one, when the outermost transaction has committed, before
   * its `transaction()` call resolves (a try that rolled back and ran again runs only what the
   * committed try asked for). For what must follow the commit within the request, such as waiting
   * until other instances can see the change before answering.
   */
  async afterCommit(then: () => Promise<void>): Promise<void> {
    if (!this.transactions.isTransactionActive()) return then();
    this.committed.get(this.transactions.tx.queryRunner!)?.push(then);
  }

  private runTransaction<T>(
    work: () => Promise<T>,
    afterwards: (() => Promise<void>)[],
    isolation?: PerDialect<IsolationLevel>,
  ): Promise<T> {
    const level = (isolation ?? DEFAULT_ISOLATION)[this.dialect];
    const opened = async () => {
      const runner = this.transactions.tx.queryRunner!;
      this.isolations.set(runner, level);
      this.committed.set(runner, afterwards);
      return work();
    };
    return isolation
      ? this.transactions.withTransaction({ isolationLevel: level }, opened)
      : this.transactions.withTransaction(opened);
  }

  /** Failures inside are the outer transaction's to handle (and retry): they leave as they came. */
  private runSavepoint<T>(work: () => Promise<T>, isolation?: PerDialect<IsolationLevel>): Promise<T> {
    const outer = this.transactions.tx.queryRunner!;
    const level = this.isolations.get(outer) ?? DEFAULT_ISOLATION[this.dialect];
    if (isolation && isolation[this.dialect] !== level) throw new IsolationMismatch(level, isolation[this.dialect]);
    return this.transactions.withTransaction(Propagation.Nested, work);
  }

  /**
   * A statement of a transaction fails as the driver failed (the transaction decides what follows);
   * one on its own is run again as `retry` allows, and then fails with its error named.
   */
  private async send(sql: string, parameters: unknown[], want: Want, retry?: RetryOptions): Promise<unknown> {
    if (this.transactions.isTransactionActive()) {
      return this.run(this.transactions.tx.queryRunner!, sql, parameters, want);
    }
    try {
      return await (retry
        ? withStatementRetry(() => this.run(undefined, sql, parameters, want), retry)
        : this.run(undefined, sql, parameters, want));
    } catch (error) {
      throw this.named(error);
    }
  }

  /** On the transaction's runner, or (outside one) on the pool or a runner of its own that goes back after the statement. */
  private async run(
    transaction: QueryRunner | undefined,
    sql: string,
    parameters: unknown[],
    want: Want,
  ): Promise<unknown> {
    if (transaction === undefined) {
      // Looked up on first use: the pool exists once the data source is initialized.
      this.pooled ??= PooledStatements.of(this.dataSource) ?? null;
      if (this.pooled) return this.pooled.run(sql, parameters, want);
    }
    const runner = transaction ?? this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(sql, parameters, true);
      if (want === 'rows') return result.records;
      const affected = Number(result.affected ?? 0);
      if (want === 'affected') return affected;
      // mysql2's header carries insertId; better-sqlite3's run() gives lastInsertRowid, which TypeORM passes as raw.
      const raw = result.raw as { insertId?: unknown } | number | bigint | undefined;
      const key = typeof raw === 'object' && raw !== null ? raw.insertId : raw;
      return { affected, id: affected > 0 ? generatedKey(key) : undefined } satisfies Inserted;
    } finally {
      if (!transaction) await runner.release();
    }
  }

  /**
   * A failure that says the database cannot serve now (unreachable, timed out, not ready, closed
   * while shutting down: isDatabaseUnavailable) leaves as DatabaseUnavailable, the named 503 the
   * exception filter answers like any HttpException, with the driver's error as its cause; any
   * other failure leaves as it came. Once the data source is closed every failure is that one: the
   * drivers then fail in ways of their own (a TypeError on SQLite).
   */
  private named(error: unknown): unknown {
    if (error instanceof DatabaseUnavailable) return error;
    return !this.dataSource.isInitialized || isDatabaseUnavailable(error) ? new DatabaseUnavailable(error) : error;
  }
}
