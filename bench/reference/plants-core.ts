/**
 * What every reference peer shares: the plant store's contract hand-written on mysql2, with no
 * framework. The SQL is the service's (one INSERT, one keyset SELECT, one DELETE, the token
 * lookup by SHA-256 hash); the token lookup is cached in-process for a few seconds. The peers
 * differ only in their HTTP layer (bare node:http, bare Express, Express with production
 * middleware), so the distances between them are the cost of Express itself and of that middleware.
 *
 * Bodies are parsed with lossless-json, as the service does, because JSON.parse rounds integers
 * beyond 2^53 and an int64 id must arrive exactly. Ids leave as raw JSON numbers (mysql2 returns
 * BIGINT as decimal strings with bigNumberStrings).
 */
import { createHash } from 'node:crypto';
import { isInteger, parse } from 'lossless-json';
import mysql, { Pool, ResultSetHeader, RowDataPacket } from 'mysql2/promise';

export const REALM = 'plant-store';
export const BODY_LIMIT_BYTES = 16 * 1024;
export const INT32_MAX = 2147483647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;
const BEARER = /^bearer(?:\s+(\S+))?\s*$/i;
const LAST_USED_RESOLUTION_MS = 60_000;

export type Scope = 'plants:read' | 'plants:write';

/** An answer that is not 2xx: `{error, message}` plus, for 401/403, a challenge header. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly challenge?: string,
  ) {
    super(message);
  }
}

export interface Principal {
  subject: string;
  scopes: string[];
  /** Epoch milliseconds, or null for a token that never expires. */
  expiresAt: number | null;
}

export interface PeerConfig {
  databaseUrl: string;
  port: number;
  host: string;
  poolSize: number;
  maxPage: number;
  tokenCacheTtlMs: number;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): PeerConfig {
  if (!env.DATABASE_URL) throw new Error('DATABASE_URL is required, e.g. mysql://root@127.0.0.1:3306/plantstore');
  return {
    databaseUrl: env.DATABASE_URL,
    port: Number(env.PORT ?? 3000),
    host: env.HOST ?? '127.0.0.1',
    poolSize: Number(env.DB_POOL_SIZE ?? 10),
    maxPage: Number(env.PLANTS_MAX_PAGE ?? 1000),
    tokenCacheTtlMs: Number(env.TOKEN_CACHE_TTL_MS ?? 5000),
  };
}

// ---------------------------------------------------------------------------------------------
// Errors

export function errorBody(status: number, message: string): string {
  return JSON.stringify({ error: status, message });
}

const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
]);

/** Any thrown value as the HTTP error to answer with; unexpected ones are logged, never shown. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const e = error as { code?: string; fatal?: boolean } | null;
  if (e && (UNAVAILABLE.has(String(e.code)) || e.fatal === true)) {
    return new HttpError(503, 'The database is unavailable; try again shortly');
  }
  console.error(error);
  return new HttpError(500, 'Internal server error');
}

// ---------------------------------------------------------------------------------------------
// Validation: the service's rules, hand-written

const int64Message = (name: string) => `${name} must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
const LIMIT_MESSAGE = `limit must be an integer from 1 to ${INT32_MAX}`;

/** A decimal int64 as it arrives in a path or query string, or null. */
export function parseInt64(text: string | undefined): bigint | null {
  if (text === undefined || text.length > 24 || !/^-?\d+$/.test(text)) return null;
  const value = BigInt(text);
  return value >= INT64_MIN && value <= INT64_MAX ? value : null;
}

export function parseId(text: string): bigint {
  const id = parseInt64(text);
  if (id === null) throw new HttpError(400, int64Message('id'));
  return id;
}

/** `?limit&after`; every other parameter, or a repeated one, is refused. */
export function parseListQuery(entries: Iterable<[string, string | string[] | undefined]>): {
  limit?: number;
  after?: bigint;
} {
  const unknown: string[] = [];
  const problems: string[] = [];
  const out: { limit?: number; after?: bigint } = {};
  for (const [key, value] of entries) {
    if (key === 'limit') {
      const n = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : NaN;
      if (n >= 1 && n <= INT32_MAX) out.limit = n;
      else problems.push(LIMIT_MESSAGE);
    } else if (key === 'after') {
      const after = typeof value === 'string' ? parseInt64(value) : null;
      if (after === null) problems.push(int64Message('after'));
      else out.after = after;
    } else {
      unknown.push(`property ${key} should not exist`);
    }
  }
  if (unknown.length + problems.length > 0)
    throw new HttpError(400, [...new Set([...unknown, ...problems])].join('; '));
  return out;
}

class ForbiddenKey extends Error {}

/** JSON text to a value with integers as BigInt (exact int64) and `__proto__` refused. */
export function parseJson(text: string): unknown {
  try {
    return parse(
      text,
      (key, value) => {
        if (key === '__proto__') throw new ForbiddenKey();
        return value;
      },
      (literal) => (isInteger(literal) ? BigInt(literal) : Number(literal)),
    );
  } catch (error) {
    if (error instanceof ForbiddenKey) throw new HttpError(400, 'The JSON key "__proto__" is not allowed');
    throw new HttpError(
      400,
      `Malformed JSON: ${error instanceof RangeError ? 'nested too deeply' : (error as Error).message}`,
    );
  }
}

function textProblem(value: unknown, min: number, max: number): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must be valid Unicode text';
  // Length in code points, as utf8mb4 counts them: a surrogate pair is one character.
  let length = value.length;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) length--;
  }
  if (length < min || length > max) return `must be from ${min} to ${max} characters long`;
  if (!/\S/u.test(value)) return 'must not be blank';
  return null;
}

export interface NewPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

/** The body of POST /plants: `{id, name, tag?}`, nothing else. */
export function validateNewPlant(body: unknown): NewPlant {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(
      400,
      body === undefined ? `${int64Message('id')}; name must be a string` : 'Request body must be a JSON object',
    );
  }
  const fields = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(fields)) {
    if (key !== 'id' && key !== 'name' && key !== 'tag') problems.push(`property ${key} should not exist`);
  }
  const { id, name, tag } = fields;
  if (typeof id !== 'bigint' || id < INT64_MIN || id > INT64_MAX) problems.push(int64Message('id'));
  const nameProblem = textProblem(name, 1, 255);
  if (nameProblem) problems.push(`name ${nameProblem}`);
  const tagProblem = tag === undefined || tag === null ? null : textProblem(tag, 1, 64);
  if (tagProblem) problems.push(`tag ${tagProblem}`);
  if (problems.length > 0) throw new HttpError(400, problems.join('; '));
  return { id: id as bigint, name: name as string, tag: (tag as string | null | undefined) ?? null };
}

// ---------------------------------------------------------------------------------------------
// JSON out: ids are written as they are stored, as raw JSON numbers

export function plantJson(id: string, name: string, tag: string | null): string {
  return tag === null
    ? `{"id":${id},"name":${JSON.stringify(name)}}`
    : `{"id":${id},"name":${JSON.stringify(name)},"tag":${JSON.stringify(tag)}}`;
}

// ---------------------------------------------------------------------------------------------
// Data access and the token cache

interface TokenRow extends RowDataPacket {
  id: string;
  subject: string;
  scopes: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

interface PlantRow extends RowDataPacket {
  id: string;
  name: string;
  tag: string | null;
}

export interface ListPage {
  body: string;
  /** The `Link` header value when more plants follow. */
  link?: string;
}

interface CachedLookup {
  until: number;
  principal: Promise<Principal | null>;
  /** The principal once the lookup found the token valid. */
  found?: Principal;
}

const tokenHash = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

export class PlantStore {
  readonly pool: Pool;
  private readonly tokenCache = new Map<string, CachedLookup>();

  constructor(private readonly config: PeerConfig) {
    this.pool = mysql.createPool({
      uri: config.databaseUrl,
      connectionLimit: config.poolSize,
      charset: 'utf8mb4_unicode_ci',
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
  }

  /**
   * The principal behind an Authorization header, or an HttpError (401/403). The lookup by hash is
   * cached for tokenCacheTtlMs; expiry is checked on every request, revocation within the TTL.
   */
  async authorize(header: string | undefined, scope: Scope): Promise<Principal> {
    const match = BEARER.exec(header ?? '');
    if (!match) {
      throw new HttpError(
        401,
        'Authentication required: send Authorization: Bearer <token>',
        `Bearer realm="${REALM}"`,
      );
    }
    const secret = match[1] ?? '';
    const principal = TOKEN_PATTERN.test(secret) ? await this.lookup(secret) : null;
    if (!principal || (principal.expiresAt !== null && principal.expiresAt <= Date.now())) {
      throw new HttpError(
        401,
        'The access token is invalid, expired or revoked',
        `Bearer realm="${REALM}", error="invalid_token"`,
      );
    }
    if (!principal.scopes.includes(scope)) {
      throw new HttpError(
        403,
        `This token lacks the scope ${scope}`,
        `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
      );
    }
    return principal;
  }

  /**
   * The subject of the header's token when its cached lookup found it valid, else null: known
   * without a query, as a rate limit must know its key before anything else runs.
   */
  knownSubject(header: string | undefined): string | null {
    const secret = BEARER.exec(header ?? '')?.[1];
    if (secret === undefined || !TOKEN_PATTERN.test(secret)) return null;
    const cached = this.tokenCache.get(tokenHash(secret));
    return cached && cached.until > Date.now() ? (cached.found?.subject ?? null) : null;
  }

  private lookup(secret: string): Promise<Principal | null> {
    const hash = tokenHash(secret);
    const now = Date.now();
    const cached = this.tokenCache.get(hash);
    if (cached && cached.until > now) return cached.principal;

    const entry: CachedLookup = { until: now + this.config.tokenCacheTtlMs, principal: this.fetchPrincipal(hash, now) };
    if (this.tokenCache.size >= 10_000) this.tokenCache.delete(this.tokenCache.keys().next().value as string);
    this.tokenCache.set(hash, entry);
    entry.principal.then(
      (principal) => (entry.found = principal ?? undefined),
      () => this.tokenCache.delete(hash),
    );
    return entry.principal;
  }

  private async fetchPrincipal(hash: string, now: number): Promise<Principal | null> {
    const [rows] = await this.pool.query<TokenRow[]>(
      'SELECT id, subject, scopes, expires_at, revoked_at, last_used_at FROM api_tokens WHERE token_hash = ? LIMIT 1',
      [hash],
    );
    const token = rows[0];
    if (!token || token.revoked_at) return null;
    if (!token.last_used_at || now - token.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.pool.query('UPDATE api_tokens SET last_used_at = ? WHERE id = ?', [new Date(now), token.id]);
    }
    return { subject: token.subject, scopes: token.scopes.split(' '), expiresAt: token.expires_at?.getTime() ?? null };
  }

  /** One INSERT; the primary key (owner, id) refuses a duplicate. */
  async create(owner: string, plant: NewPlant): Promise<string> {
    try {
      await this.pool.query('INSERT INTO plants (owner, id, name, tag) VALUES (?, ?, ?, ?)', [
        owner,
        plant.id,
        plant.name,
        plant.tag,
      ]);
    } catch (error) {
      if ((error as { code?: string }).code === 'ER_DUP_ENTRY') {
        throw new HttpError(409, `A plant with id ${plant.id} already exists`);
      }
      throw error;
    }
    return plantJson(String(plant.id), plant.name, plant.tag);
  }

  /** One SELECT: keyset paging on (owner, id), one row more than the page to know if more follow. */
  async list(owner: string, query: { limit?: number; after?: bigint }): Promise<ListPage> {
    const limit = Math.min(query.limit ?? this.config.maxPage, this.config.maxPage);
    const [rows] =
      query.after === undefined
        ? await this.pool.query<PlantRow[]>('SELECT id, name, tag FROM plants WHERE owner = ? ORDER BY id LIMIT ?', [
            owner,
            limit + 1,
          ])
        : await this.pool.query<PlantRow[]>(
            'SELECT id, name, tag FROM plants WHERE owner = ? AND id > ? ORDER BY id LIMIT ?',
            [owner, query.after, limit + 1],
          );
    const count = Math.min(rows.length, limit);
    const parts: string[] = new Array<string>(count);
    for (let i = 0; i < count; i++) parts[i] = plantJson(rows[i].id, rows[i].name, rows[i].tag);
    const body = `[${parts.join(',')}]`;
    return rows.length > limit ? { body, link: `<?limit=${limit}&after=${rows[count - 1].id}>; rel="next"` } : { body };
  }

  /** One DELETE scoped to the owner: another user's plant is as absent as a missing one. */
  async remove(owner: string, id: bigint): Promise<void> {
    const [result] = await this.pool.query<ResultSetHeader>('DELETE FROM plants WHERE owner = ? AND id = ?', [
      owner,
      id,
    ]);
    if (result.affectedRows === 0) throw new HttpError(404, `Plant ${id} not found`);
  }
}
