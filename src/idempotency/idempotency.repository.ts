import { Injectable } from '@nestjs/common';
import { Database, NOW_MS, READ, Row, WRITE, isUniqueViolation, withNow } from '../database';

/** The statements of the table; the clock comparisons are the database's, so every instance judges alike. */
const STATEMENTS = {
  insert: withNow(
    (now) =>
      'INSERT INTO idempotency_keys (owner, idem_key, fingerprint, claim, lease_until, expires_at) ' +
      `VALUES (?, ?, ?, ?, ${now} + ?, ${now} + ?)`,
  ),
  find: withNow(
    (now) =>
      'SELECT fingerprint, status_code, response, ' +
      `CASE WHEN lease_until <= ${now} THEN 1 ELSE 0 END AS lease_expired, ` +
      `CASE WHEN expires_at <= ${now} THEN 1 ELSE 0 END AS expired ` +
      'FROM idempotency_keys WHERE owner = ? AND idem_key = ?',
  ),
  takeOver: withNow(
    (now) =>
      'UPDATE idempotency_keys SET fingerprint = ?, claim = ?, status_code = NULL, response = NULL, ' +
      `lease_until = ${now} + ?, expires_at = ${now} + ? ` +
      `WHERE owner = ? AND idem_key = ? AND (expires_at <= ${now} ` +
      `OR (status_code IS NULL AND lease_until <= ${now}))`,
  ),
  complete: withNow(
    (now) =>
      `UPDATE idempotency_keys SET status_code = ?, response = ?, claim = NULL, expires_at = ${now} + ? ` +
      'WHERE owner = ? AND idem_key = ? AND claim = ?',
  ),
  release: 'DELETE FROM idempotency_keys WHERE owner = ? AND idem_key = ? AND claim = ?',
  // Expired answers are never given again, so they are left to the purge.
  sealedAnswers: withNow(
    (now) =>
      'SELECT owner, idem_key, response FROM idempotency_keys ' +
      'WHERE (owner > ? OR (owner = ? AND idem_key > ?)) AND response LIKE ? AND response NOT LIKE ? ' +
      `AND expires_at > ${now} ORDER BY owner, idem_key LIMIT ?`,
  ),
  replaceAnswer: 'UPDATE idempotency_keys SET response = ? WHERE owner = ? AND idem_key = ? AND response = ?',
  purgeExpired: {
    mysql: `DELETE FROM idempotency_keys WHERE expires_at <= ${NOW_MS.mysql} ORDER BY expires_at LIMIT ?`,
    sqlite:
      'DELETE FROM idempotency_keys WHERE rowid IN ' +
      `(SELECT rowid FROM idempotency_keys WHERE expires_at <= ${NOW_MS.sqlite} ORDER BY expires_at LIMIT ?)`,
  },
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

/** The idempotency_keys table; every call one statement. */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly database: Database) {}

  /**
   * Takes a new key for the request `claim`: false when a row for it exists already. The row lives
   * at least as long as the lease, so it cannot expire (and be taken) under a request still running.
   */
  async insert(ref: KeyRef, fingerprint: string, claim: string, leaseMs: number, ttlMs: number): Promise<boolean> {
    try {
      await this.database.execute(
        STATEMENTS.insert,
        [ref.owner, ref.key, fingerprint, claim, leaseMs, Math.max(leaseMs, ttlMs)],
        WRITE,
      );
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async find(ref: KeyRef): Promise<KeyRow | undefined> {
    const rows = await this.database.query<Row>(STATEMENTS.find, [ref.owner, ref.key], READ);
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
    const changed = await this.database.execute(
      STATEMENTS.takeOver,
      [fingerprint, claim, leaseMs, Math.max(leaseMs, ttlMs), ref.owner, ref.key],
      WRITE,
    );
    return changed > 0;
  }

  /**
   * Stores the answer of the request that holds the key (within the transaction of the request's own
   * writes when one is open); false when the request no longer holds it (its lease ran out and
   * another took over).
   */
  async complete(
    ref: KeyRef,
    claim: string,
    answer: { statusCode: number; response: string },
    ttlMs: number,
  ): Promise<boolean> {
    const parameters = [answer.statusCode, answer.response, ttlMs, ref.owner, ref.key, claim];
    return (await this.database.execute(STATEMENTS.complete, parameters, WRITE)) > 0;
  }

  /** Gives the key up (the request failed on the server's side), so a retry runs afresh. */
  async release(ref: KeyRef, claim: string): Promise<void> {
    await this.database.execute(STATEMENTS.release, [ref.owner, ref.key, claim], WRITE);
  }

  /**
   * Up to `limit` stored answers, in key order after `after`, that start with `marker` but not with
   * `marker + prefix`: the sealed answers not sealed under the key of `prefix`. Expired ones are left out.
   */
  async sealedAnswers(
    marker: string,
    prefix: string,
    after: KeyRef | undefined,
    limit: number,
  ): Promise<{ ref: KeyRef; response: string }[]> {
    const from = after ?? { owner: '', key: '' };
    const rows = await this.database.query<Row>(
      STATEMENTS.sealedAnswers,
      [from.owner, from.owner, from.key, `${marker}%`, `${marker}${prefix}%`, limit],
      READ,
    );
    return rows.map((row) => ({
      ref: { owner: String(row.owner), key: String(row.idem_key) },
      response: String(row.response),
    }));
  }

  /** Writes `response` in place of `previous`, only if the row still holds `previous`; whether it did. */
  async replaceAnswer(ref: KeyRef, previous: string, response: string): Promise<boolean> {
    const parameters = [response, ref.owner, ref.key, previous];
    return (await this.database.execute(STATEMENTS.replaceAnswer, parameters, WRITE)) > 0;
  }

  /** Deletes up to `limit` expired keys, oldest first; how many went. */
  purgeExpired(limit: number): Promise<number> {
    return this.database.execute(STATEMENTS.purgeExpired, [limit], WRITE);
  }
}
