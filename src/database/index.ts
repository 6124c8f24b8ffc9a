/** What the rest of the service may use of the database: the one data-access API and its error classes. */
export { Database, NOW_MS, READ, READ_COMMITTED, WRITE, withNow } from './database';
export type { Condition, Dialect, IsolationLevel, PerDialect, Row, Statement, TransactionOptions } from './database';
export { isUniqueViolation } from './database-errors';
export { DATABASE_LOG_CONTEXT } from './database-logger';
export type { EntityTable, PropertyOf, Read } from './entity-table';
export { galeraNodeServes, readGaleraStatus } from './galera';
export type { GaleraStatus } from './galera';
export type { Inserted } from './pooled-statements';
export { STATEMENT_RETRY_DEFAULTS } from './statement-retry';
export type { RetryOptions } from './statement-retry';
