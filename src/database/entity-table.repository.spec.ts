import { Column, CreateDateColumn, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { int64Transformer } from '../common/int64';
import { prepareDatabase, testDatabases } from '../../test/utils/databases';
import { databaseConfig } from '../../test/utils/repository-database';
import { buildDataSourceOptions, createDataSource } from './data-source';
import { EntityTable } from './entity-table';

const MAX_INT64 = 9223372036854775807n;

/** An entity with what EntityTable converts: an exact int64, a NULL, a literal default, a creation date. */
@Entity({ name: 'entity_table_samples' })
class Sample {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  owner: string;

  @PrimaryColumn({ type: 'bigint', transformer: int64Transformer })
  id: bigint;

  @Column({ type: 'varchar', length: 64, nullable: true })
  note?: string | null;

  @Column({ type: 'varchar', length: 16, default: 'fresh' })
  state: string;

  @CreateDateColumn()
  createdAt: Date;
}

describe.each(testDatabases())(`${EntityTable.name} on %s`, (name) => {
  let dataSource: DataSource;
  let samples: EntityTable<Sample>;

  beforeAll(async () => {
    const options = buildDataSourceOptions(databaseConfig(await prepareDatabase(name)));
    dataSource = createDataSource({
      ...options,
      entities: [Sample],
      migrations: [],
      subscribers: [],
      logging: false,
      logger: undefined,
    });
    await dataSource.initialize();
    await dataSource.synchronize();
    samples = new EntityTable(dataSource, Sample);
  });
  afterAll(async () => {
    await dataSource.query(`DROP TABLE ${samples.name}`);
    await dataSource.destroy();
  });
  beforeEach(() => dataSource.query(`DELETE FROM ${samples.name}`));

  const everything = () => samples.select('sample', samples.properties).orderBy('sample.id');
  const readAll = async () =>
    ((await dataSource.query(samples.compile(everything(), []))) as Record<string, unknown>[]).map(
      samples.reader(samples.properties),
    );

  it('knows the columns in the order the entity declares them', () => {
    expect(samples.properties).toEqual(['owner', 'id', 'note', 'state', 'createdAt']);
  });

  it('makes a new row of the values given, the time of insertion as its creation date, a default for the rest', () => {
    const before = Date.now();
    const row = samples.newRow({ owner: 'alice', id: 1n });
    expect(row).toStrictEqual({ owner: 'alice', id: 1n, note: undefined, state: 'fresh', createdAt: expect.any(Date) });
    expect(samples.newRow({ owner: 'alice', id: 1n, unknown: 1 } as Partial<Sample>)).not.toHaveProperty('unknown');
    expect(row.createdAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(row.createdAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(samples.newRow({ owner: 'alice', id: 1n, state: 'given' }).state).toBe('given');
  });

  it('stores a row and reads it back as it was made: exact int64, the date to the millisecond, no NULL', async () => {
    const rows = [
      samples.newRow({ owner: 'alice', id: MAX_INT64, note: 'a note' }),
      samples.newRow({ owner: 'alice', id: -MAX_INT64 - 1n }),
    ];
    for (const row of rows) await dataSource.query(samples.insert(), samples.values(row));
    const read = await readAll();
    expect(read).toEqual([rows[1], rows[0]]);
    expect(read[0]).not.toHaveProperty('note');
    expect(read[1].createdAt).toBeInstanceOf(Date);
  });

  it('inserts only while a condition holds, its parameters after the row', async () => {
    const row = samples.newRow({ owner: 'alice', id: 1n });
    await dataSource.query(samples.insert('? = 1'), [...samples.values(row), 0]);
    await expect(readAll()).resolves.toEqual([]);
    await dataSource.query(samples.insert('? = 1'), [...samples.values(row), 1]);
    await expect(readAll()).resolves.toEqual([row]);
  });

  it("compiles a query builder's statement with its named parameters in the order given", async () => {
    for (const id of [1n, 2n, 3n]) {
      await dataSource.query(samples.insert(), samples.values(samples.newRow({ owner: 'alice', id })));
    }
    await dataSource.query(samples.insert(), samples.values(samples.newRow({ owner: 'bob', id: 4n })));
    const after = samples.compile(
      samples
        .select('sample', ['id'])
        .where('sample.owner = :owner')
        .andWhere('sample.id > :after')
        .orderBy('sample.id'),
      ['owner', 'after'],
    );
    const read = samples.reader(['id']);
    const ids = ((await dataSource.query(after, ['alice', 1n])) as Record<string, unknown>[]).map(read);
    expect(ids).toStrictEqual([{ id: 2n }, { id: 3n }]);
  });

  it('refuses, when compiling, parameters named in another order than the statement takes them', () => {
    const query = samples.delete().where('id = :id AND owner = :owner');
    expect(() => samples.compile(query, ['owner', 'id'])).toThrow(
      /takes its parameters as \(id, owner\), not \(owner, id\)/,
    );
  });

  it('updates with SQL values, assigning in the order given, columns named by their properties', async () => {
    const row = samples.newRow({ owner: 'alice', id: 1n, note: 'old' });
    await dataSource.query(samples.insert(), samples.values(row));
    // The note is read before the state changes: MySQL/MariaDB assign left to right.
    const update = samples.compile(
      samples
        .update()
        .set({ note: () => 'state', state: () => ':state' })
        .where('owner = :owner AND id = :id'),
      ['state', 'owner', 'id'],
    );
    await dataSource.query(update, ['used', 'alice', 1n]);
    await expect(readAll()).resolves.toEqual([{ ...row, note: 'fresh', state: 'used' }]);
  });

  it("names a property's column as this database quotes it, for the statements the query builder cannot make", () => {
    const quote = (name: string) => dataSource.driver.escape(name);
    expect(samples.column('createdAt')).toBe(quote('createdAt'));
    expect(samples.columnList(['owner', 'id'])).toBe(`${quote('owner')}, ${quote('id')}`);
    expect(samples.name).toBe(quote('entity_table_samples'));
  });

  it('makes a statement once for each shape of call', () => {
    const make = jest.fn(() => 'SELECT 1');
    expect(samples.shapedStatement('one', make)).toBe('SELECT 1');
    expect(samples.shapedStatement('one', make)).toBe('SELECT 1');
    expect(make).toHaveBeenCalledTimes(1);
    samples.shapedStatement('two', make);
    expect(make).toHaveBeenCalledTimes(2);
  });
});
