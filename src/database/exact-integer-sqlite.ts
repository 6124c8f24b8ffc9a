import Database from 'better-sqlite3';

/**
 * better-sqlite3 reads INTEGER values as JavaScript numbers, which round above 2^53. Data
 * statements here return BigInt instead, so int64 ids survive the round trip exactly. Schema
 * introspection (PRAGMA) keeps plain numbers, which TypeORM's schema builder compares against.
 */
export class ExactIntegerDatabase extends Database {
  override prepare<BindParameters extends unknown[] | object = unknown[], Result = unknown>(
    source: string,
  ): Database.Statement<BindParameters, Result> {
    const statement = super.prepare<BindParameters, Result>(source);
    if (statement.reader && !/^\s*PRAGMA\b/i.test(source)) statement.safeIntegers(true);
    return statement;
  }
}
