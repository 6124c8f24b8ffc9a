import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../config/configuration';
import { ApiToken } from './api-token.entity';
import { Principal } from './principal';
import { SCOPE_NAMES, Scope } from './scopes';
import { generateTokenSecret, hashTokenSecret, looksLikeTokenSecret, TOKEN_PREFIX } from './token-secret';
import { TokensRepository } from './tokens.repository';
import { REJECTED_CACHE_MAX_ENTRIES, TOKEN_CACHE_MAX_ENTRIES, USER_ID_MAX_LENGTH } from './auth.limits';

/** User ids: printable ASCII without spaces, so they read the same in logs, URLs and shells. */
export const SUBJECT_PATTERN = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._@:+|-]{0,${USER_ID_MAX_LENGTH - 1}}$`);

/** `last_used_at` is written at most this often per token, not on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

interface CachedLookup {
  principal: Principal;
  /** Epoch ms after which the lookup must be repeated. */
  until: number;
}

export class TokenInputError extends Error {
  override name = 'TokenInputError';
}

export interface CreateTokenInput {
  subject: string;
  scopes?: readonly Scope[];
  expiresInMs?: number;
  name?: string;
}

export interface IssuedToken {
  /** The bearer secret: shown once, never stored. */
  secret: string;
  token: ApiToken;
}

export type TokenStatus = 'active' | 'expired' | 'revoked';

export function tokenStatus(token: ApiToken, now: Date): TokenStatus {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

@Injectable()
export class TokensService {
  /**
   * Lookups by token hash, kept for TOKEN_CACHE_TTL_MS so that a request costs one statement (its
   * own), not two. A revocation made through this process applies at once; one made elsewhere (the
   * CLI, another instance) applies within the TTL. Expiry is always exact.
   */
  private readonly cache = new Map<string, CachedLookup>();
  /** Refused secrets by hash, with the epoch ms until which they stay refused without a lookup. */
  private readonly rejected = new Map<string, number>();
  /** Lookups in flight, shared by concurrent requests with one token. */
  private readonly pending = new Map<string, Promise<Principal | null>>();
  private readonly cacheTtlMs: number;

  constructor(
    private readonly tokens: TokensRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.cacheTtlMs = config.get('auth.tokenCacheTtlMs', { infer: true });
  }

  async create(input: CreateTokenInput): Promise<IssuedToken> {
    if (!SUBJECT_PATTERN.test(input.subject)) {
      throw new TokenInputError(
        `A user id is 1 to ${USER_ID_MAX_LENGTH} characters: letters, digits and . _ @ : + | - (starting with a letter or digit)`,
      );
    }
    const scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)] : [...SCOPE_NAMES];
    if (input.name !== undefined && (input.name.length < 1 || input.name.length > 100)) {
      throw new TokenInputError('A token name is 1 to 100 characters');
    }
    if (input.expiresInMs !== undefined && !(input.expiresInMs > 0)) {
      throw new TokenInputError('An expiry must lie in the future');
    }

    const secret = generateTokenSecret();
    const now = new Date();
    const token = Object.assign(new ApiToken(), {
      id: randomUUID(),
      tokenHash: hashTokenSecret(secret),
      subject: input.subject,
      scopes: scopes.join(' '),
      name: input.name ?? null,
      createdAt: now,
      expiresAt: input.expiresInMs ? new Date(now.getTime() + input.expiresInMs) : null,
      revokedAt: null,
      lastUsedAt: null,
    });
    await this.tokens.insert(token);
    return { secret, token };
  }

  /** The caller behind a bearer secret, or null when the secret is unknown, expired or revoked. */
  async authenticate(secret: string): Promise<Principal | null> {
    if (!looksLikeTokenSecret(secret)) return null;
    const hash = hashTokenSecret(secret);
    if (this.cacheTtlMs === 0) return (await this.lookup(hash)).principal;

    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.principal;
    const rejectedUntil = this.rejected.get(hash);
    if (rejectedUntil !== undefined && rejectedUntil > now) return null;

    // Concurrent requests with one token share the lookup in flight. A failed lookup (database
    // unreachable) is not remembered: the next request retries.
    let lookup = this.pending.get(hash);
    if (!lookup) {
      lookup = this.lookup(hash).then(
        ({ principal, validUntil }) => {
          this.pending.delete(hash);
          this.remember(hash, principal, Math.min(now + this.cacheTtlMs, validUntil));
          return principal;
        },
        (error: unknown) => {
          this.pending.delete(hash);
          throw error;
        },
      );
      this.pending.set(hash, lookup);
    }
    return lookup;
  }

  /**
   * The caller behind a secret whose valid lookup is remembered, without asking the database;
   * null for any other secret (unknown, refused, not looked up yet, or no cache).
   */
  cachedPrincipal(secret: string): Principal | null {
    if (this.cacheTtlMs === 0 || !looksLikeTokenSecret(secret)) return null;
    const cached = this.cache.get(hashTokenSecret(secret));
    return cached && cached.until > Date.now() ? cached.principal : null;
  }

  private remember(hash: string, principal: Principal | null, until: number): void {
    const [kept, dropped] = principal ? [this.cache, this.rejected] : [this.rejected, this.cache];
    dropped.delete(hash);
    kept.delete(hash);
    const max = principal ? TOKEN_CACHE_MAX_ENTRIES : REJECTED_CACHE_MAX_ENTRIES;
    if (kept.size >= max) kept.delete(kept.keys().next().value as string);
    if (principal) this.cache.set(hash, { principal, until });
    else this.rejected.set(hash, until);
  }

  /** One SELECT by hash; `last_used_at` is written at most once a minute per token. */
  private async lookup(hash: string): Promise<{ principal: Principal | null; validUntil: number }> {
    const token = await this.tokens.findByHash(hash);
    const now = new Date();
    if (!token || tokenStatus(token, now) !== 'active') return { principal: null, validUntil: Infinity };

    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.tokens.setLastUsed(token.id, now);
    }
    return {
      principal: { subject: token.subject, scopes: token.scopes.split(' '), kind: 'pst', tokenId: token.id },
      validUntil: token.expiresAt ? token.expiresAt.getTime() : Infinity,
    };
  }

  list(subject?: string): Promise<ApiToken[]> {
    return this.tokens.list(subject);
  }

  /**
   * Revokes by public id or by the secret itself. Revoking twice is harmless; the result says
   * whether this call did it. Null when nothing matches.
   */
  async revoke(reference: string): Promise<{ token: ApiToken; revokedNow: boolean } | null> {
    const token = reference.startsWith(TOKEN_PREFIX)
      ? await this.tokens.findByHash(hashTokenSecret(reference))
      : await this.tokens.findById(reference);
    if (!token) return null;
    if (token.revokedAt) return { token, revokedNow: false };
    token.revokedAt = new Date();
    await this.tokens.setRevoked(token.id, token.revokedAt);
    this.cache.delete(token.tokenHash);
    return { token, revokedNow: true };
  }
}
