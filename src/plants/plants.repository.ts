import { Injectable } from '@nestjs/common';
import { declaredProperties } from '../common/openapi/declared-properties';
import { Condition, Database, EntityTable, READ, WRITE } from '../database';
import { PlantDto } from './dto/plant.dto';
import { Plant } from './plant.entity';

/** What a page shows of each plant: the columns the API declares (PlantDto), all but the owner. */
const SHOWN = declaredProperties(PlantDto);

/**
 * The plants table: one statement per call, rows as the API shows them. The statements are made
 * from the Plant entity's metadata with TypeORM's query builder, once, when the repository is made
 * at start-up: a request sends a text made then, and reads its rows through the column types and
 * transformers of the entity, without building SQL or hydrating entities, which cost more CPU than
 * the statement itself (bench/RESULTS.md). A column added to the entity is written, read and shown
 * without a change here. The schema test keeps entity, migration and database in step, and the
 * repository and e2e specs run these statements on both databases.
 */
@Injectable()
export class PlantsRepository {
  private readonly table: EntityTable<Plant>;
  private readonly firstPage: string;
  private readonly pageAfter: string;
  private readonly insertPlant: string;
  private readonly deletePlant: string;
  private readonly read: (row: Record<string, unknown>) => PlantDto;
  /**
   * The INSERT and DELETE made only while a condition holds, checked in the same statement
   * (webhook events: only while no subscription wants the change's event, see EventOutbox); each
   * composed once, by the condition's SQL, which is the same string on every call.
   */
  private readonly conditional = { insert: new Map<string, string>(), delete: new Map<string, string>() };

  constructor(private readonly database: Database) {
    const plants = database.table(Plant);
    this.table = plants;
    // Keyset paging on the key (owner, id): an index range scan however deep the client reads. The
    // page size is a parameter, so that every size is one statement text (the query builder
    // writes a LIMIT's number into the text).
    const page = plants.select('plant', SHOWN).where('plant.owner = :owner');
    this.firstPage = `${plants.compile(page.clone().orderBy('plant.id'), ['owner'])} LIMIT ?`;
    this.pageAfter = `${plants.compile(page.andWhere('plant.id > :after').orderBy('plant.id'), ['owner', 'after'])} LIMIT ?`;
    this.insertPlant = plants.insert();
    this.deletePlant = plants.compile(plants.delete().where('owner = :owner AND id = :id'), ['owner', 'id']);
    this.read = plants.reader(SHOWN) as (row: Record<string, unknown>) => PlantDto;
  }

  /**
   * The plant about to be created, as it will be stored: the owner and the fields the client gave,
   * and what the service sets (a creation date, say). Created by `insert`.
   */
  newRow(owner: string, fields: Partial<Omit<Plant, 'owner'>>): Plant {
    const row = this.table.newRow(fields);
    row.owner = owner;
    return row;
  }

  /**
   * One INSERT; a duplicate (owner, id) fails with the driver's unique-violation error. With
   * `onlyIf`, the row is inserted only while that condition holds. Whether a row was inserted.
   * Within a transaction (an idempotent request's, or one with events) it is one of its statements.
   */
  async insert(plant: Plant, onlyIf?: Condition): Promise<boolean> {
    const values = this.table.values(plant);
    const inserted = onlyIf
      ? await this.database.execute(this.composed('insert', onlyIf), [...values, ...onlyIf.parameters], WRITE)
      : await this.database.execute(this.insertPlant, values, WRITE);
    return inserted > 0;
  }

  /** Up to `count` of the owner's plants in id order, starting after `after` when given. */
  async page(owner: string, count: number, after?: bigint): Promise<PlantDto[]> {
    const rows =
      after === undefined
        ? await this.database.query(this.firstPage, [owner, count], READ)
        : await this.database.query(this.pageAfter, [owner, after, count], READ);
    return rows.map(this.read);
  }

  /** One DELETE scoped to the owner, only while `onlyIf` holds when given; whether a row went. */
  async delete(owner: string, id: bigint, onlyIf?: Condition): Promise<boolean> {
    const deleted = onlyIf
      ? await this.database.execute(this.composed('delete', onlyIf), [owner, id, ...onlyIf.parameters], WRITE)
      : await this.database.execute(this.deletePlant, [owner, id], WRITE);
    return deleted > 0;
  }

  private composed(kind: 'insert' | 'delete', onlyIf: Condition): string {
    let statement = this.conditional[kind].get(onlyIf.sql);
    if (statement === undefined) {
      statement = kind === 'insert' ? this.table.insert(onlyIf.sql) : `${this.deletePlant} AND ${onlyIf.sql}`;
      this.conditional[kind].set(onlyIf.sql, statement);
    }
    return statement;
  }
}
