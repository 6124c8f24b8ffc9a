import { Injectable } from '@nestjs/common';
import { int64Transformer } from '../common/int64';
import { Database, READ, WRITE } from '../database';
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
  constructor(private readonly database: Database) {}

  /**
   * One INSERT; a duplicate (owner, id) fails with the driver's unique-violation error. Within a
   * transaction (an idempotent request's, with its stored answer) it is one of its statements.
   */
  async insert(plant: NewPlant): Promise<PlantDto> {
    const tag = plant.tag ?? null;
    await this.database.execute(PLANT_STATEMENTS.insert, [plant.owner, plant.id, plant.name, tag], WRITE);
    return toPlantDto({ id: plant.id, name: plant.name, tag });
  }

  /** Up to `count` of the owner's plants in id order, starting after `after` when given. */
  async page(owner: string, count: number, after?: bigint): Promise<PlantDto[]> {
    const rows =
      after === undefined
        ? await this.database.query<PlantRow>(PLANT_STATEMENTS.firstPage, [owner, count], READ)
        : await this.database.query<PlantRow>(PLANT_STATEMENTS.pageAfter, [owner, after, count], READ);
    // MySQL gives BIGINT as a decimal string, SQLite as a BigInt: both become an exact bigint.
    return rows.map((row) => toPlantDto({ id: int64Transformer.from(row.id) as bigint, name: row.name, tag: row.tag }));
  }

  /** One DELETE scoped to the owner; whether a row went. */
  async delete(owner: string, id: bigint): Promise<boolean> {
    return (await this.database.execute(PLANT_STATEMENTS.delete, [owner, id], WRITE)) > 0;
  }
}
