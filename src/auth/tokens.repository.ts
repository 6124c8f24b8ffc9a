import { Injectable } from '@nestjs/common';
import { Database } from '../database';
import { ApiToken } from './api-token.entity';

/**
 * The api_tokens table. These statements are few (token lookups are cached), so TypeORM builds them
 * from the entity; what the table holds and how is decided in TokensService.
 */
@Injectable()
export class TokensRepository {
  constructor(private readonly database: Database) {}

  async insert(token: ApiToken): Promise<void> {
    await this.database.entities((manager) => manager.insert(ApiToken, token));
  }

  findByHash(tokenHash: string): Promise<ApiToken | null> {
    return this.database.entities((manager) => manager.findOneBy(ApiToken, { tokenHash }));
  }

  findById(id: string): Promise<ApiToken | null> {
    return this.database.entities((manager) => manager.findOneBy(ApiToken, { id }));
  }

  /** Oldest first; every token, or those of one user. */
  list(subject?: string): Promise<ApiToken[]> {
    return this.database.entities((manager) =>
      manager.find(ApiToken, {
        where: subject === undefined ? {} : { subject },
        order: { createdAt: 'ASC', id: 'ASC' },
      }),
    );
  }

  async setLastUsed(id: string, at: Date): Promise<void> {
    await this.database.entities((manager) => manager.update(ApiToken, { id }, { lastUsedAt: at }));
  }

  async setRevoked(id: string, at: Date): Promise<void> {
    await this.database.entities((manager) => manager.update(ApiToken, { id }, { revokedAt: at }));
  }

  count(): Promise<number> {
    return this.database.entities((manager) => manager.count(ApiToken));
  }
}
