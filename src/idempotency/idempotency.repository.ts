import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isUniqueViolation } from '../database';
import { withStatementRetry } from '../database/statement-retry';

/** Epoch milliseconds now on each database's clock, so every instance judges leases and expiry alike. */
const DATABASE_NOW_MS = {
  mysql: 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)',
  sqlite: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
} as const;

/** A key's row as the service judges it; the clock comparisons are the database's. */
export interface KeyRow {
  fingerprint: string;
  /** Null while the first request is in flight. */
  statusCode: number | null;
  response: string | null;
  /** The in-flight holder's lease ran out: it died or gave up. */
  leaseExpired: boolean;
  /** Past `expires_at`: the key is as good as new. */
  expired: boolean;
}

export interface KeyRef {
  owner: string;
  key: string;
}

/** Writes run inside a caller's transaction (the plant's or the subscription's). */
export type TransactionWrite = (manager: EntityManager) => Promise<void>;

type Row = Record<string, unknown>;

/** The idempotency_keys table; every call one statement. */
@Injectable()
export class IdempotencyRepository {
  private readonly mysql: boolean;
  private readonly now: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    this.now = this.mysql ? DATABASE_NOW_MS.mysql : DATABASE_NOW_MS.sqlite;
  }

  /**
   * Takes a new key for the request `claim`: false when a row for it exists already. The row lives
   * at least as long as the lease, so it cannot expire (and be taken) under a request still running.
   */
  async insert(ref: KeyRef, fingerprint: string, claim: string, leaseMs: number, ttlMs: number): Promise<boolean> {
    try {
      await withStatementRetry(
        () =>
          this.execute(
            'INSERT INTO idempotency_keys (owner, idem_key, fingerprint, claim, lease_until, expires_at) ' +
              `VALUES (?, ?, ?, ?, ${this.now} + ?, ${this.now} + ?)`,
            [ref.owner, ref.key, fingerprint, claim, leaseMs, Math.max(leaseMs, ttlMs)],
          ),
        { readOnly: false },
      );
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async find(ref: KeyRef): Promise<KeyRow | undefined> {
    const rows = (await withStatementRetry(
      () =>
        this.dataSource.query(
          'SELECT fingerprint, status_code, response, ' +
            `CASE WHEN lease_until <= ${this.now} THEN 1 ELSE 0 END AS lease_expired, ` +
            `CASE WHEN expires_at <= ${this.now} THEN 1 ELSE 0 END AS expired ` +
            'FROM idempotency_keys WHERE owner = ? AND idem_key = ?',
          [ref.owner, ref.key],
        ),
      { readOnly: true },
    )) as Row[];
    if (rows.length === 0) return undefined;
    const row = rows[0];
    return {
      fingerprint: String(row.fingerprint),
      statusCode: row.status_code === null || row.status_code === undefined ? null : Number(row.status_code),
      response: (row.response as string | null) ?? null,
      leaseExpired: Number(row.lease_expired) === 1,
      expired: Number(row.expired) === 1,
    };
  }

  /**
   * Hands an expired key, or one whose holder's lease ran out, to the request `claim`. The condition
   * is checked again on the row under its lock, so of two requests taking over at once only one
   * changes it (on Galera the other loses certification, is run again and finds nothing to take).
   */
  async takeOver(ref: KeyRef, fingerprint: string, claim: string, leaseMs: number, ttlMs: number): Promise<boolean> {
    const changed = await withStatementRetry(
      () =>
        this.execute(
          'UPDATE idempotency_keys SET fingerprint = ?, claim = ?, status_code = NULL, response = NULL, ' +
            `lease_until = ${this.now} + ?, expires_at = ${this.now} + ? ` +
            `WHERE owner = ? AND idem_key = ? AND (expires_at <= ${this.now} ` +
            `OR (status_code IS NULL AND lease_until <= ${this.now}))`,
          [fingerprint, claim, leaseMs, Math.max(leaseMs, ttlMs), ref.owner, ref.key],
        ),
      { readOnly: false },
    );
    return changed > 0;
  }

  /**
   * Stores the answer of the request that holds the key, on its own or within `manager`'s
   * transaction; false when the request no longer holds it (its lease ran out and another took over).
   */
  async complete(
    ref: KeyRef,
    claim: string,
    answer: { statusCode: number; response: string },
    ttlMs: number,
    manager?: EntityManager,
  ): Promise<boolean> {
    const sql =
      `UPDATE idempotency_keys SET status_code = ?, response = ?, claim = NULL, expires_at = ${this.now} + ? ` +
      'WHERE owner = ? AND idem_key = ? AND claim = ?';
    const parameters = [answer.statusCode, answer.response, ttlMs, ref.owner, ref.key, claim];
    if (manager) return (await this.affected(manager, sql, parameters)) > 0;
    return (await withStatementRetry(() => this.execute(sql, parameters), { readOnly: false })) > 0;
  }

  /** Gives the key up (the request failed on the server's side), so a retry runs afresh. */
  async release(ref: KeyRef, claim: string): Promise<void> {
    await withStatementRetry(
      () =>
        this.execute('DELETE FROM idempotency_keys WHERE owner = ? AND idem_key = ? AND claim = ?', [
          ref.owner,
          ref.key,
          claim,
        ]),
      { readOnly: false },
    );
  }

  /** Deletes up to `limit` expired keys, oldest first; how many went. */
  async purgeExpired(limit: number): Promise<number> {
    const sql = this.mysql
      ? `DELETE FROM idempotency_keys WHERE expires_at <= ${this.now} ORDER BY expires_at LIMIT ?`
      : 'DELETE FROM idempotency_keys WHERE rowid IN ' +
        `(SELECT rowid FROM idempotency_keys WHERE expires_at <= ${this.now} ORDER BY expires_at LIMIT ?)`;
    return withStatementRetry(() => this.execute(sql, [limit]), { readOnly: false });
  }

  /** One autocommit statement; the rows it changed. */
  private async execute(sql: string, parameters: unknown[]): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return Number((await runner.query(sql, parameters, true)).affected ?? 0);
    } finally {
      await runner.release();
    }
  }

  private async affected(manager: EntityManager, sql: string, parameters: unknown[]): Promise<number> {
    const result = await manager.queryRunner!.query(sql, parameters, true);
    return Number(result.affected ?? 0);
  }
}
