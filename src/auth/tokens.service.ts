import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Repository } from 'typeorm';
import { ApiToken } from './api-token.entity';
import { Principal, SCOPES, Scope } from './principal';
import { generateTokenSecret, hashTokenSecret, looksLikeTokenSecret, TOKEN_PREFIX } from './token-secret';

/** User ids: printable ASCII without spaces, so they read the same in logs, URLs and shells. */
export const SUBJECT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@:+|-]{0,127}$/;

/** `last_used_at` is written at most this often per token, not on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export const DEVELOPMENT_SUBJECT = 'developer';

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
  constructor(@InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>) {}

  async create(input: CreateTokenInput): Promise<IssuedToken> {
    if (!SUBJECT_PATTERN.test(input.subject)) {
      throw new TokenInputError(
        'A user id is 1 to 128 characters: letters, digits and . _ @ : + | - (starting with a letter or digit)',
      );
    }
    const scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)] : [...SCOPES];
    if (input.name !== undefined && (input.name.length < 1 || input.name.length > 100)) {
      throw new TokenInputError('A token name is 1 to 100 characters');
    }
    if (input.expiresInMs !== undefined && !(input.expiresInMs > 0)) {
      throw new TokenInputError('An expiry must lie in the future');
    }

    const secret = generateTokenSecret();
    const now = new Date();
    const token = this.tokens.create({
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
    const token = await this.tokens.findOneBy({ tokenHash: hashTokenSecret(secret) });
    const now = new Date();
    if (!token || tokenStatus(token, now) !== 'active') return null;

    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.tokens.update({ id: token.id }, { lastUsedAt: now });
    }
    return { subject: token.subject, scopes: token.scopes.split(' '), tokenId: token.id };
  }

  list(subject?: string): Promise<ApiToken[]> {
    return this.tokens.find({
      where: subject === undefined ? {} : { subject },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /**
   * Revokes by public id or by the secret itself. Revoking twice is harmless; the result says
   * whether this call did it. Null when nothing matches.
   */
  async revoke(reference: string): Promise<{ token: ApiToken; revokedNow: boolean } | null> {
    const token = reference.startsWith(TOKEN_PREFIX)
      ? await this.tokens.findOneBy({ tokenHash: hashTokenSecret(reference) })
      : await this.tokens.findOneBy({ id: reference });
    if (!token) return null;
    if (token.revokedAt) return { token, revokedNow: false };
    token.revokedAt = new Date();
    await this.tokens.update({ id: token.id }, { revokedAt: token.revokedAt });
    return { token, revokedNow: true };
  }

  /** On a database with no tokens at all, issues one for local development; otherwise null. */
  async createFirstRunToken(): Promise<IssuedToken | null> {
    if ((await this.tokens.count()) > 0) return null;
    return this.create({ subject: DEVELOPMENT_SUBJECT, name: 'development token' });
  }
}
