import { MigrationInterface, QueryRunner, Table, TableColumnOptions } from 'typeorm';

/**
 * Written with TypeORM's schema API so the same migration builds the schema on MySQL/MariaDB and
 * on SQLite. On MySQL the text columns are utf8mb4 (emoji, any script) and the user ids use a
 * binary collation, so "Alice" and "alice" are two users, never one.
 */
export class InitialSchema1763780000000 implements MigrationInterface {
  name = 'InitialSchema1763780000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = ['mysql', 'mariadb'].includes(queryRunner.connection.options.type);
    const text = (options: TableColumnOptions): TableColumnOptions =>
      mysql ? { ...options, charset: 'utf8mb4', collation: 'utf8mb4_unicode_ci' } : options;
    const identifier = (options: TableColumnOptions): TableColumnOptions =>
      mysql ? { ...options, charset: 'ascii', collation: 'ascii_bin' } : options;

    await queryRunner.createTable(
      new Table({
        name: 'plants',
        columns: [
          identifier({ name: 'owner', type: 'varchar', length: '128', isPrimary: true }),
          { name: 'id', type: 'bigint', isPrimary: true },
          text({ name: 'name', type: 'varchar', length: '255' }),
          text({ name: 'tag', type: 'varchar', length: '64', isNullable: true }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'api_tokens',
        columns: [
          identifier({ name: 'id', type: 'varchar', length: '36', isPrimary: true }),
          identifier({ name: 'token_hash', type: 'varchar', length: '64' }),
          identifier({ name: 'subject', type: 'varchar', length: '128' }),
          identifier({ name: 'scopes', type: 'varchar', length: '255' }),
          text({ name: 'name', type: 'varchar', length: '100', isNullable: true }),
          { name: 'created_at', type: 'datetime' },
          { name: 'expires_at', type: 'datetime', isNullable: true },
          { name: 'revoked_at', type: 'datetime', isNullable: true },
          { name: 'last_used_at', type: 'datetime', isNullable: true },
        ],
        indices: [
          { name: 'IDX_api_tokens_token_hash', columnNames: ['token_hash'], isUnique: true },
          { name: 'IDX_api_tokens_subject', columnNames: ['subject'] },
        ],
      }),
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_tokens');
    await queryRunner.dropTable('plants');
  }
}
