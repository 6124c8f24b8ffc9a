import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/**
 * Readiness of the schema, not just of the server: one statement that names every table and
 * column of the service's entities and matches no row (`WHERE 1 = 0`), so the database resolves
 * them all without reading anything. A renamed or dropped table, a missing column or a dropped
 * database fails it, as they fail every call.
 */
@Injectable()
export class SchemaHealthIndicator {
  private statement?: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async check(key: string, timeoutMs: number): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.dataSource.query(this.probe()),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return indicator.up();
    } catch {
      return indicator.down();
    } finally {
      clearTimeout(timer);
    }
  }

  private probe(): string {
    if (this.statement) return this.statement;
    const { driver } = this.dataSource;
    const tables = this.dataSource.entityMetadatas.map((entity) => driver.escape(entity.tableName));
    const columns = this.dataSource.entityMetadatas.flatMap((entity) =>
      entity.columns.map((column) => `${driver.escape(entity.tableName)}.${driver.escape(column.databaseName)}`),
    );
    this.statement = `SELECT ${columns.join(', ')} FROM ${tables.join(', ')} WHERE 1 = 0`;
    return this.statement;
  }
}
