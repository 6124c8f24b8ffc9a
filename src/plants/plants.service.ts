import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryResult } from 'typeorm';
import { AppConfig } from '../config/configuration';
import { isUniqueViolation } from '../database/database-errors';
import { withStatementRetry } from '../database/statement-retry';
import { int64Transformer } from '../common/int64';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PlantDto } from './dto/plant.dto';
import { Plant } from './plant.entity';

/**
 * The three statements of the API, written out once. They are the same on MySQL and SQLite, and
 * they are exactly the statements TypeORM's find/insert/delete would send, without building that
 * SQL anew and hydrating entities on every request, which cost more CPU than the statement itself
 * (bench/RESULTS.md). The table is the Plant entity's; the schema test keeps entity, migration and
 * database in step, and the e2e tests run these statements on both databases.
 */
export const PLANT_STATEMENTS = {
  firstPage: 'SELECT id, name, tag FROM plants WHERE owner = ? ORDER BY id LIMIT ?',
  pageAfter: 'SELECT id, name, tag FROM plants WHERE owner = ? AND id > ? ORDER BY id LIMIT ?',
  insert: 'INSERT INTO plants (owner, id, name, tag) VALUES (?, ?, ?, ?)',
  delete: 'DELETE FROM plants WHERE owner = ? AND id = ?',
} as const;

interface PlantRow {
  id: string | bigint;
  name: string;
  tag: string | null;
}

export interface PlantPage {
  plants: PlantDto[];
  /** The page size actually applied: the requested limit, capped by PLANTS_MAX_PAGE. */
  limit: number;
  /** Set when more plants follow: the cursor for the next page. */
  nextAfter?: bigint;
}

export function toPlantDto(plant: Pick<Plant, 'id' | 'name' | 'tag'>): PlantDto {
  return plant.tag === null || plant.tag === undefined
    ? { id: plant.id, name: plant.name }
    : { id: plant.id, name: plant.name, tag: plant.tag };
}

@Injectable()
export class PlantsService {
  private readonly maxPage: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    config: ConfigService<AppConfig, true>,
  ) {
    this.maxPage = config.get('plants.maxPage', { infer: true });
  }

  /** One INSERT; the primary key (owner, id) is what refuses a duplicate, so there is no race. */
  async create(owner: string, dto: CreatePlantDto): Promise<PlantDto> {
    const plant = { owner, id: dto.id, name: dto.name, tag: dto.tag ?? null };
    try {
      await withStatementRetry(() => this.run(PLANT_STATEMENTS.insert, [owner, dto.id, dto.name, plant.tag]), { readOnly: false });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictException(`A plant with id ${dto.id} already exists`);
      }
      throw error;
    }
    return toPlantDto(plant);
  }

  /** Keyset paging on (owner, id): each page is an index range scan, however deep the client reads. */
  async list(owner: string, query: { limit?: number; after?: bigint }): Promise<PlantPage> {
    const limit = Math.min(query.limit ?? this.maxPage, this.maxPage);
    const { records } = await withStatementRetry(() => (query.after === undefined
      ? this.run(PLANT_STATEMENTS.firstPage, [owner, limit + 1])
      : this.run(PLANT_STATEMENTS.pageAfter, [owner, query.after, limit + 1])), { readOnly: true });
    const rows = records as PlantRow[];
    // One row more than the page was asked for: its presence says another page follows.
    const plants = rows
      .slice(0, limit)
      .map((row) => toPlantDto({ id: int64Transformer.from(row.id) as bigint, name: row.name, tag: row.tag }));
    const nextAfter = rows.length > limit ? plants[plants.length - 1].id : undefined;
    return { plants, limit, nextAfter };
  }

  /** One DELETE scoped to the owner: another user's plant is as absent as a missing one. */
  async remove(owner: string, id: bigint): Promise<void> {
    const result = await withStatementRetry(() => this.run(PLANT_STATEMENTS.delete, [owner, id]), { readOnly: false });
    if (!result.affected) throw new NotFoundException(`Plant ${id} not found`);
  }

  /**
   * Through a TypeORM query runner like every other statement, so pooling, the query timeout, the
   * query logger and the connection subscribers apply as they do elsewhere.
   */
  private async run(sql: string, parameters: unknown[]): Promise<QueryResult> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return await runner.query(sql, parameters, true);
    } finally {
      await runner.release();
    }
  }
}
