import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The answer kept for a request sent with an `Idempotency-Key` (the IdempotencyKeys migration).
 * IdempotencyRepository writes its statements out; this describes the table for the schema test
 * and readiness. In flight while `status_code` is NULL; times are epoch milliseconds of the
 * database's clock.
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKey {
  @PrimaryColumn({ type: 'varchar', length: 128 })
  owner: string;

  @PrimaryColumn({ name: 'idem_key', type: 'varchar', length: 255 })
  key: string;

  /** SHA-256 of the request, hex. */
  @Column({ type: 'char', length: 64 })
  fingerprint: string;

  @Column({ type: 'varchar', length: 36, nullable: true })
  claim: string | null;

  @Column({ name: 'lease_until', type: 'bigint' })
  leaseUntil: string;

  @Index('IDX_idempotency_keys_expires')
  @Column({ name: 'expires_at', type: 'bigint' })
  expiresAt: string;

  @Column({ name: 'status_code', type: 'int', nullable: true })
  statusCode: number | null;

  /** The stored answer, sealed. */
  @Column({ type: 'text', nullable: true })
  response: string | null;
}
