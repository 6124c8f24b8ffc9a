import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * An access token as stored: only the SHA-256 of the secret is kept, so a copy of the database
 * does not let anyone call the API.
 */
@Entity({ name: 'api_tokens' })
export class ApiToken {
  /** Public identifier, safe to show and to pass to `plantstore token revoke`. */
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Index('IDX_api_tokens_token_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  /** The user the token acts for; owns the plants created with it. */
  @Index('IDX_api_tokens_subject')
  @Column({ type: 'varchar', length: 128 })
  subject: string;

  /** Space-separated, as in an OAuth scope string. */
  @Column({ type: 'varchar', length: 255 })
  scopes: string;

  @Column({ type: 'varchar', length: 100, nullable: true })
  name: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3, nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt: Date | null;
}
