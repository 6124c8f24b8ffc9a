import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

const COLUMNS = [
  { name: 'created_at', isNullable: false },
  { name: 'expires_at', isNullable: true },
  { name: 'revoked_at', isNullable: true },
  { name: 'last_used_at', isNullable: true },
];

/**
 * Token times to the millisecond. MySQL's and MariaDB's DATETIME keeps whole seconds unless given a
 * precision, so an expiry was cut to the second before it and a token died up to a second early.
 * SQLite kept the milliseconds already (it stores the text TypeORM writes); its declared type
 * changes too, so entities and schema agree on both.
 */
export class TokenTimesToTheMillisecond1763900000000 implements MigrationInterface {
  name = 'TokenTimesToTheMillisecond1763900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await this.setPrecision(queryRunner, 3);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await this.setPrecision(queryRunner, undefined);
  }

  private async setPrecision(queryRunner: QueryRunner, precision: number | undefined): Promise<void> {
    await queryRunner.changeColumns(
      'api_tokens',
      COLUMNS.map(({ name, isNullable }) => ({
        oldColumn: new TableColumn({
          name,
          type: 'datetime',
          isNullable,
          precision: precision === undefined ? 3 : undefined,
        }),
        newColumn: new TableColumn({ name, type: 'datetime', isNullable, precision }),
      })),
    );
  }
}
