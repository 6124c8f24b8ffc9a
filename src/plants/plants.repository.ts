import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { CannotExecuteNotConnectedError, DataSource, EntityManager, QueryResult } from 'typeorm';
import { int64Transformer } from '../common/int64';
import { withStatementRetry } from '../database/statement-retry';
import { PlantDto } from './dto/plant.dto';

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

export interface NewPlant {
  owner: string;
  id: bigint;
  name: string;
  tag?: string | null;
}

export function toPlantDto(plant: { id: bigint; name: string; tag?: string | null }): PlantDto {
  return plant.tag === null || plant.tag === undefined
    ? { id: plant.id, name: plant.name }
    : { id: plant.id, name: plant.name, tag: plant.tag };
}

/** The plants table: one statement per call, rows as the API shows them. */
@Injectable()
export class PlantsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * One INSERT; a duplicate (owner, id) fails with the driver's unique-violation error. With
   * `alongside`, the INSERT and that write (the stored answer of an idempotent request) are one
   * transaction, run again whole if it lost a deadlock or, on Galera, a certification.
   */
  async insert(plant: NewPlant, alongside?: (manager: EntityManager) => Promise<void>): Promise<PlantDto> {
    const tag = plant.tag ?? null;
    const parameters = [plant.owner, plant.id, plant.name, tag];
    await withStatementRetry<unknown>(
      () =>
        alongside
          ? this.transaction(async (manager) => {
              await manager.query(PLANT_STATEMENTS.insert, parameters);
              await alongside(manager);
            })
          : this.run(PLANT_STATEMENTS.insert, parameters),
      { readOnly: false },
    );
    return toPlantDto({ id: plant.id, name: plant.name, tag });
  }

  /** Up to `count` of the owner's plants in id order, starting after `after` when given. */
  async page(owner: string, count: number, after?: bigint): Promise<PlantDto[]> {
    const { records } = await withStatementRetry(
      () =>
        after === undefined
          ? this.run(PLANT_STATEMENTS.firstPage, [owner, count])
          : this.run(PLANT_STATEMENTS.pageAfter, [owner, after, count]),
      { readOnly: true },
    );
    // MySQL gives BIGINT as a decimal string, SQLite as a BigInt: both become an exact bigint.
    return (records as PlantRow[]).map((row) =>
      toPlantDto({ id: int64Transformer.from(row.id) as bigint, name: row.name, tag: row.tag }),
    );
  }

  /** One DELETE scoped to the owner; whether a row went. */
  async delete(owner: string, id: bigint): Promise<boolean> {
    const result = await withStatementRetry(() => this.run(PLANT_STATEMENTS.delete, [owner, id]), { readOnly: false });
    return Boolean(result.affected);
  }

  private async transaction(work: (manager: EntityManager) => Promise<void>): Promise<void> {
    try {
      await this.dataSource.transaction(work);
    } catch (error) {
      if (!this.dataSource.isInitialized) throw new CannotExecuteNotConnectedError();
      throw error;
    }
  }

  /**
   * Through a TypeORM query runner like every other statement, so pooling, the query timeout, the
   * query logger and the connection subscribers apply as they do elsewhere.
   */
  private async run(sql: string, parameters: unknown[]): Promise<QueryResult> {
    try {
      const runner = this.dataSource.createQueryRunner();
      try {
        return await runner.query(sql, parameters, true);
      } finally {
        await runner.release();
      }
    } catch (error) {
      // Once the data source is closed (shutting down) the drivers fail in ways of their own
      // (a TypeError on SQLite); callers are told plainly that the database is not there.
      if (!this.dataSource.isInitialized) throw new CannotExecuteNotConnectedError();
      throw error;
    }
  }
}
