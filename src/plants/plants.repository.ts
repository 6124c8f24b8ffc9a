import { Injectable } from '@nestjs/common';
import { int64Transformer } from '../common/int64';
import { Condition, Database, READ, Statement, WRITE } from '../database';
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

/**
 * The INSERT and DELETE made only while `condition` holds, checked in the same statement (webhook
 * events: only while no subscription wants the change's event, see EventOutbox).
 */
const CONDITIONAL_STATEMENTS = {
  insert: (condition: string) => ({
    mysql: `INSERT INTO plants (owner, id, name, tag) SELECT ?, ?, ?, ? FROM DUAL WHERE ${condition}`,
    sqlite: `INSERT INTO plants (owner, id, name, tag) SELECT ?, ?, ?, ? WHERE ${condition}`,
  }),
  delete: (condition: string) => `${PLANT_STATEMENTS.delete} AND ${condition}`,
};
/** Each conditional statement composed once, by the condition's SQL (the same string on every call). */
const composed = { insert: new Map<string, Statement>(), delete: new Map<string, Statement>() };

function conditional(kind: keyof typeof CONDITIONAL_STATEMENTS, onlyIf: Condition): Statement {
  let statement = composed[kind].get(onlyIf.sql);
  if (statement === undefined) {
    statement = CONDITIONAL_STATEMENTS[kind](onlyIf.sql);
    composed[kind].set(onlyIf.sql, statement);
  }
  return statement;
}

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
   * One INSERT; a duplicate (owner, id) fails with the driver's unique-violation error. With
   * `onlyIf`, the row is inserted only while that condition holds. Whether a row was inserted.
   * Within a transaction (an idempotent request's, or one with events) it is one of its statements.
   */
  async insert(plant: NewPlant, onlyIf?: Condition): Promise<boolean> {
    const tag = plant.tag ?? null;
    const inserted = onlyIf
      ? await this.database.execute(
          conditional('insert', onlyIf),
          [plant.owner, plant.id, plant.name, tag, ...onlyIf.parameters],
          WRITE,
        )
      : await this.database.execute(PLANT_STATEMENTS.insert, [plant.owner, plant.id, plant.name, tag], WRITE);
    return inserted > 0;
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

  /** One DELETE scoped to the owner, only while `onlyIf` holds when given; whether a row went. */
  async delete(owner: string, id: bigint, onlyIf?: Condition): Promise<boolean> {
    const deleted = onlyIf
      ? await this.database.execute(conditional('delete', onlyIf), [owner, id, ...onlyIf.parameters], WRITE)
      : await this.database.execute(PLANT_STATEMENTS.delete, [owner, id], WRITE);
    return deleted > 0;
  }
}
