import { Injectable } from '@nestjs/common';
import { Database, PerDialect, READ, Row, WRITE } from '../database';
import { ApiToken } from './api-token.entity';

const COLUMNS = 'id, token_hash, subject, scopes, name, created_at, expires_at, revoked_at, last_used_at';

const TOKEN_STATEMENTS = {
  insert: `INSERT INTO api_tokens (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  byHash: `SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ?`,
  byId: `SELECT ${COLUMNS} FROM api_tokens WHERE id = ?`,
  all: `SELECT ${COLUMNS} FROM api_tokens ORDER BY created_at, id`,
  ofSubject: `SELECT ${COLUMNS} FROM api_tokens WHERE subject = ? ORDER BY created_at, id`,
  lastUsed: 'UPDATE api_tokens SET last_used_at = ? WHERE id = ?',
  revoked: 'UPDATE api_tokens SET revoked_at = ? WHERE id = ?',
  count: 'SELECT COUNT(*) AS n FROM api_tokens',
} as const;

interface TimeColumn {
  toStored(time: Date): unknown;
  fromStored(value: unknown): Date;
}

/**
 * A `datetime(3)` as each driver takes and gives it. mysql2 converts a Date itself, in UTC (the
 * data source's timezone). SQLite keeps the text `2026-01-02 03:04:05.678`, in UTC, as TypeORM wrote
 * the tokens it stored before.
 */
const TIME: PerDialect<TimeColumn> = {
  mysql: { toStored: (time) => time, fromStored: (value) => value as Date },
  sqlite: {
    toStored: (time) => time.toISOString().replace('T', ' ').replace('Z', ''),
    fromStored: (value) => new Date(`${String(value).replace(' ', 'T')}Z`),
  },
};

/**
 * The api_tokens table, its statements written out. Token lookups are cached (TokensService), so
 * these run once per token and cache period, not per request; each is retried as the others are.
 */
@Injectable()
export class TokensRepository {
  private readonly time: TimeColumn;

  constructor(private readonly database: Database) {
    this.time = TIME[database.dialect];
  }

  async insert(token: ApiToken): Promise<void> {
    const { time } = this;
    const optional = (at: Date | null) => (at === null ? null : time.toStored(at));
    await this.database.execute(
      TOKEN_STATEMENTS.insert,
      [
        token.id,
        token.tokenHash,
        token.subject,
        token.scopes,
        token.name,
        time.toStored(token.createdAt),
        optional(token.expiresAt),
        optional(token.revokedAt),
        optional(token.lastUsedAt),
      ],
      WRITE,
    );
  }

  async findByHash(tokenHash: string): Promise<ApiToken | null> {
    const [row] = await this.database.query(TOKEN_STATEMENTS.byHash, [tokenHash], READ);
    return row ? toToken(row, this.time) : null;
  }

  async findById(id: string): Promise<ApiToken | null> {
    const [row] = await this.database.query(TOKEN_STATEMENTS.byId, [id], READ);
    return row ? toToken(row, this.time) : null;
  }

  /** Oldest first; every token, or those of one user. */
  async list(subject?: string): Promise<ApiToken[]> {
    const rows =
      subject === undefined
        ? await this.database.query(TOKEN_STATEMENTS.all, [], READ)
        : await this.database.query(TOKEN_STATEMENTS.ofSubject, [subject], READ);
    return rows.map((row) => toToken(row, this.time));
  }

  async setLastUsed(id: string, at: Date): Promise<void> {
    await this.database.execute(TOKEN_STATEMENTS.lastUsed, [this.time.toStored(at), id], WRITE);
  }

  async setRevoked(id: string, at: Date): Promise<void> {
    await this.database.execute(TOKEN_STATEMENTS.revoked, [this.time.toStored(at), id], WRITE);
  }

  async count(): Promise<number> {
    const [row] = await this.database.query(TOKEN_STATEMENTS.count, [], READ);
    return Number(row.n);
  }
}

function toToken(row: Row, time: TimeColumn): ApiToken {
  const optional = (value: unknown) => (value === null || value === undefined ? null : time.fromStored(value));
  return Object.assign(new ApiToken(), {
    id: String(row.id),
    tokenHash: String(row.token_hash),
    subject: String(row.subject),
    scopes: String(row.scopes),
    name: (row.name as string | null) ?? null,
    createdAt: time.fromStored(row.created_at),
    expiresAt: optional(row.expires_at),
    revokedAt: optional(row.revoked_at),
    lastUsedAt: optional(row.last_used_at),
  });
}
