import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { CannotExecuteNotConnectedError, DataSource, Repository } from 'typeorm';
import { ApiToken } from './api-token.entity';

/**
 * The api_tokens table. These statements are few (token lookups are cached), so TypeORM's own
 * repository builds them; what the table holds and how is decided in TokensService.
 */
@Injectable()
export class TokensRepository {
  private readonly table: Repository<ApiToken>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.table = dataSource.getRepository(ApiToken);
  }

  async insert(token: ApiToken): Promise<void> {
    await this.use(() => this.table.insert(token));
  }

  findByHash(tokenHash: string): Promise<ApiToken | null> {
    return this.use(() => this.table.findOneBy({ tokenHash }));
  }

  findById(id: string): Promise<ApiToken | null> {
    return this.use(() => this.table.findOneBy({ id }));
  }

  /** Oldest first; every token, or those of one user. */
  list(subject?: string): Promise<ApiToken[]> {
    return this.use(() =>
      this.table.find({ where: subject === undefined ? {} : { subject }, order: { createdAt: 'ASC', id: 'ASC' } }),
    );
  }

  async setLastUsed(id: string, at: Date): Promise<void> {
    await this.use(() => this.table.update({ id }, { lastUsedAt: at }));
  }

  async setRevoked(id: string, at: Date): Promise<void> {
    await this.use(() => this.table.update({ id }, { revokedAt: at }));
  }

  count(): Promise<number> {
    return this.use(() => this.table.count());
  }

  private async use<T>(statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (error) {
      // Once the data source is closed (shutting down) the drivers fail in ways of their own
      // (a TypeError on SQLite); callers are told plainly that the database is not there.
      if (!this.dataSource.isInitialized) throw new CannotExecuteNotConnectedError();
      throw error;
    }
  }
}
