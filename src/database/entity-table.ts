import {
  DataSource,
  DeleteQueryBuilder,
  EntityMetadata,
  ObjectLiteral,
  QueryBuilder,
  SelectQueryBuilder,
  UpdateQueryBuilder,
} from 'typeorm';
import { compileCopy, compileList } from '../common/compiled-copy';

type ColumnMetadata = EntityMetadata['columns'][number];

/** A property of an entity that may be a column. */
export type PropertyOf<E> = Extract<keyof E, string>;

/** A row as a statement that selected `K` reads it: its NULL columns left out. */
export type Read<E, K extends PropertyOf<E>> = { [P in K]?: Exclude<E[P], null> };

/**
 * Column types whose values the drivers (MySQL's and SQLite's `prepareHydratedValue` and
 * `preparePersistentValue`) pass as they are, both ways, but for the column's transformer: text and
 * integers. A value of one is read and written without the driver's chain of type tests, which cost
 * a list a few microseconds a page.
 */
const AS_THEY_ARE = new Set<unknown>(['varchar', 'char', 'text', 'bigint', 'int', 'integer']);

type Transformer = NonNullable<ColumnMetadata['transformer']>;

/** A transformer's `from`, or each of a list's in reverse order, as TypeORM applies them. */
function fromColumn(transformer: Transformer): (value: unknown) => unknown {
  if (!Array.isArray(transformer)) return (value) => transformer.from(value);
  const reversed = [...transformer].reverse();
  return (value) => reversed.reduce((read, each) => each.from(read), value);
}

/** A transformer's `to`, or each of a list's in order. */
function toColumn(transformer: Transformer): (value: unknown) => unknown {
  if (!Array.isArray(transformer)) return (value) => transformer.to(value);
  return (value) => transformer.reduce((written, each) => each.to(written), value);
}

/** A named parameter while a statement is compiled: where the query builder puts it tells its position. */
class Placeholder {
  constructor(readonly name: string) {}
}

/**
 * One entity's table as its statements need it, from TypeORM's metadata of the entity: statements
 * made with TypeORM's query builder (or, where it has none, from the column list), compiled once, when
 * a repository is made at start-up, into the SQL text this database runs with positional
 * parameters; and the conversions of the values between the entity's properties and the columns
 * (the column types as the driver stores and reads them, the columns' transformers), which the
 * statements' parameters and rows go through. A request then builds no SQL and hydrates no
 * entity: it sends a text made once with its values in order, and reads plain rows
 * (docs/performance.md).
 */
export class EntityTable<E extends ObjectLiteral> {
  /** The table's name, quoted for this database. */
  readonly name: string;
  /** Statements whose text depends on a call's shape (which fields change, how many ids), by shape. */
  private readonly shaped = new Map<string, string>();
  private readonly metadata: EntityMetadata;
  private readonly columns: readonly ColumnMetadata[];
  /** Every column's value of a row, in order, as the driver stores it (the parameters of `insert()`). */
  private readonly listValues: (row: object) => unknown[];
  /** A copy of the columns of an object, and no other property. */
  private readonly copyColumns: (values: object) => Record<string, unknown>;
  /** What a new row holds in a column it was given no value for: a creation or update date, a literal default. */
  private readonly stamps: readonly { property: string; value: () => unknown }[];

  constructor(
    private readonly dataSource: DataSource,
    private readonly entity: new () => E,
  ) {
    this.metadata = dataSource.getMetadata(entity);
    this.name = dataSource.driver.escape(this.metadata.tablePath);
    this.columns = this.metadata.columns;
    const driver = dataSource.driver;
    const embedded = this.columns.find((column) => column.embeddedMetadata !== undefined);
    if (embedded) throw new Error(`${this.metadata.targetName}.${embedded.propertyPath}: an embedded column`);
    this.listValues = compileList(
      this.columns.map((column) => ({
        name: column.propertyName,
        convert: !AS_THEY_ARE.has(column.type)
          ? (value: unknown) => driver.preparePersistentValue(value, column)
          : column.transformer && toColumn(column.transformer),
      })),
    );
    this.copyColumns = compileCopy(this.columns.map((column) => ({ name: column.propertyName })));
    this.stamps = this.columns.flatMap((column) => {
      const stamp = column.isCreateDate || column.isUpdateDate;
      const literal = column.default !== undefined && typeof column.default !== 'function';
      if (!stamp && !literal) return [];
      const value = stamp ? () => new Date() : () => column.default as unknown;
      return [{ property: column.propertyName, value }];
    });
  }

  /** Every property of the entity that is a column, in the order the entity declares them. */
  get properties(): PropertyOf<E>[] {
    return this.columns.map((column) => column.propertyName as PropertyOf<E>);
  }

  /** A SELECT of `properties` from the table as `alias`, each column named as its property. */
  select(alias: string, properties: readonly PropertyOf<E>[]): SelectQueryBuilder<E> {
    const query = this.dataSource.createQueryBuilder(this.entity, alias).select([]);
    for (const property of properties) query.addSelect(`${alias}.${this.metadataOf(property).propertyPath}`, property);
    return query;
  }

  /** A DELETE from the table, its WHERE naming columns by their properties. */
  delete(): DeleteQueryBuilder<E> {
    return this.dataSource.createQueryBuilder().delete().from(this.entity);
  }

  /**
   * An UPDATE of the table: its SET (values as SQL, `() => ':name'`, so that the statement is made
   * once) and WHERE name columns by their properties, and it assigns in the order SET gives them,
   * which MySQL/MariaDB read left to right.
   */
  update(): UpdateQueryBuilder<E> {
    return this.dataSource.createQueryBuilder().update(this.entity);
  }

  /**
   * The text of a statement made with the query builder, its named parameters (`:owner`) sent as
   * `?` in the order `parameters` gives. A parameter the statement places elsewhere, or one it does
   * not take, fails here, at start-up.
   */
  compile(query: QueryBuilder<E>, parameters: readonly string[]): string {
    const [sql, sent] = query
      .setParameters(Object.fromEntries(parameters.map((name) => [name, new Placeholder(name)])))
      .getQueryAndParameters();
    const order = (sent as unknown[]).map((value) => (value instanceof Placeholder ? value.name : String(value)));
    if (order.join() !== parameters.join()) {
      throw new Error(`${sql} takes its parameters as (${order.join(', ')}), not (${parameters.join(', ')})`);
    }
    return sql;
  }

  /**
   * The statement `make` compiles for a shape of call (which fields a change gives, how many ids
   * a list has), made on the first call of that shape and reused after: the query builder then
   * runs once per shape, not once per call. `shape` names everything the text depends on.
   */
  shapedStatement(shape: string, make: () => string): string {
    let statement = this.shaped.get(shape);
    if (statement === undefined) {
      statement = make();
      this.shaped.set(shape, statement);
    }
    return statement;
  }

  /**
   * An INSERT of one row, every column in the entity's order (its parameters: `values()`). With
   * `condition`, the row is inserted only while that SQL condition holds, checked by the same
   * statement; its parameters follow the row's. TypeORM's query builder makes no INSERT ... SELECT.
   */
  insert(condition?: string): string {
    const columns = this.columns.map((column) => this.dataSource.driver.escape(column.databaseName)).join(', ');
    const placeholders = this.columns.map(() => '?').join(', ');
    if (condition === undefined) return `INSERT INTO ${this.name} (${columns}) VALUES (${placeholders})`;
    // MySQL/MariaDB need a table to select from for a WHERE; SQLite has no DUAL.
    const from = this.dataSource.options.type === 'better-sqlite3' ? '' : ' FROM DUAL';
    return `INSERT INTO ${this.name} (${columns}) SELECT ${placeholders}${from} WHERE ${condition}`;
  }

  /** The parameters of `insert()` for a row: each column's value as the driver stores it, NULL for none. */
  values(row: E): unknown[] {
    return this.listValues(row);
  }

  /**
   * A row about to be inserted, as it will be stored: the columns' values given (any other property
   * is not copied), and for a column they leave out the time of insertion when it is a creation or
   * update date, else its declared default. The caller has the whole row before the INSERT runs, to
   * answer with it and to record it in an event of the same transaction, without reading it back.
   */
  newRow(values: Partial<E>): E {
    const row = this.copyColumns(values);
    for (const { property, value } of this.stamps) if (row[property] === undefined) row[property] = value();
    return row as E;
  }

  /**
   * How to read the rows of a statement that selected `properties` (each as its property, as
   * `select()` names them): each value as the driver and the column's transformer make it, and a
   * NULL left out rather than set to null.
   */
  reader<K extends PropertyOf<E>>(properties: readonly K[]): (row: Record<string, unknown>) => Read<E, K> {
    const driver = this.dataSource.driver;
    // Each value as the driver and the column's transformer read it, in a copy written for these
    // columns (compileCopy: what a hand-written mapping costs).
    const converters = properties.map((property) => {
      const column = this.metadataOf(property);
      if (!AS_THEY_ARE.has(column.type)) return (value: unknown) => driver.prepareHydratedValue(value, column);
      return column.transformer ? fromColumn(column.transformer) : undefined;
    });
    return compileCopy(
      properties.map((property, i) => ({ name: property, convert: converters[i] })),
      { leaveOutNull: true },
    );
  }

  /**
   * A property's column, quoted for this database: for the few statements the query builder cannot
   * make (an INSERT ... SELECT), written from the entity's names rather than copied ones.
   */
  column(property: PropertyOf<E>): string {
    return this.dataSource.driver.escape(this.metadataOf(property).databaseName);
  }

  /** The columns of `properties`, quoted and in that order, as an INSERT's column list. */
  columnList(properties: readonly PropertyOf<E>[]): string {
    return properties.map((property) => this.column(property)).join(', ');
  }

  private metadataOf(property: string): ColumnMetadata {
    const column = this.metadata.findColumnWithPropertyName(property);
    if (column === undefined) throw new Error(`${this.metadata.targetName} has no column ${property}`);
    return column;
  }
}
