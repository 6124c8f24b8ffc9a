import { Logger as NestLogger } from '@nestjs/common';
import { Logger as TypeOrmLogger } from 'typeorm';

/** The context of the database's log lines: the migrations' progress among them. */
export const DATABASE_LOG_CONTEXT = 'Database';

/**
 * TypeORM's messages through the service's own logger (JSON lines in production). Statements are
 * logged without their parameters, which hold user data and token hashes; failed statements are not
 * logged here at all, since the exception filter logs each unexpected failure once, and expected ones
 * (a duplicate id answered 409) are not failures of the service.
 */
export class DatabaseLogger implements TypeOrmLogger {
  private readonly logger = new NestLogger(DATABASE_LOG_CONTEXT);

  logQuery(): void {}

  logQueryError(): void {}

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`Statement took ${time} ms: ${query.slice(0, 300)}`);
  }

  logSchemaBuild(message: string): void {
    this.logger.log(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
    else this.logger.log(String(message));
  }
}
