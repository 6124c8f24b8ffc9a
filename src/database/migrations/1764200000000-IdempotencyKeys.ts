import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The answers kept for requests sent with an `Idempotency-Key`, one row per owner and key. The
 * primary key (owner, idem_key) is what lets only one request own a key at a time, on one server and
 * across Galera nodes alike (a unique key certifies cluster-wide). A row is in flight while
 * `status_code` is NULL (`claim` names the request holding it until `lease_until`), then holds the
 * answer until `expires_at`. Times are epoch milliseconds of the database's clock.
 */
export class IdempotencyKeys1764200000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764200000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    for (const statement of mysql ? MYSQL_UP : SQLITE_UP) await queryRunner.query(statement);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE idempotency_keys');
  }
}

const ID = 'CHARACTER SET ascii COLLATE ascii_bin';

const MYSQL_UP = [
  `CREATE TABLE idempotency_keys (
    owner varchar(128) ${ID} NOT NULL,
    idem_key varchar(255) ${ID} NOT NULL,
    fingerprint char(64) ${ID} NOT NULL,
    claim varchar(36) ${ID} NULL,
    lease_until bigint NOT NULL,
    expires_at bigint NOT NULL,
    status_code int NULL,
    response text CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    PRIMARY KEY (owner, idem_key),
    KEY IDX_idempotency_keys_expires (expires_at)
  ) ENGINE=InnoDB`,
];

const SQLITE_UP = [
  `CREATE TABLE idempotency_keys (
    owner varchar(128) NOT NULL,
    idem_key varchar(255) NOT NULL,
    fingerprint char(64) NOT NULL,
    claim varchar(36) NULL,
    lease_until bigint NOT NULL,
    expires_at bigint NOT NULL,
    status_code int NULL,
    response text NULL,
    PRIMARY KEY (owner, idem_key)
  )`,
  'CREATE INDEX IDX_idempotency_keys_expires ON idempotency_keys (expires_at)',
];
