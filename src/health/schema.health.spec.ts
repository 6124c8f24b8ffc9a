import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource, Entity, PrimaryColumn, Column } from 'typeorm';
import { SchemaHealthIndicator } from './schema.health';

@Entity('shelves')
class Shelf {
  @PrimaryColumn()
  id!: number;

  @Column({ name: 'shelf_label' })
  label!: string;
}

@Entity('pots')
class Pot {
  @PrimaryColumn()
  id!: number;
}

describe(SchemaHealthIndicator.name, () => {
  let dataSource: DataSource;
  let indicator: SchemaHealthIndicator;

  beforeEach(async () => {
    dataSource = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: [Shelf, Pot],
      synchronize: true,
    });
    await dataSource.initialize();
    indicator = new SchemaHealthIndicator(dataSource, new HealthIndicatorService());
  });
  afterEach(() => dataSource.destroy());

  it('is up when every table and column of the entities is there, reading no row', async () => {
    await dataSource.query('INSERT INTO shelves (id, shelf_label) VALUES (1, ?)', ['top']);
    const query = jest.spyOn(dataSource, 'query');
    await expect(indicator.check('schema', 1000)).resolves.toEqual({ schema: { status: 'up' } });
    expect(query).toHaveBeenCalledTimes(1);
    const [statement] = query.mock.calls[0] as [string];
    expect(statement).toMatch(/WHERE 1 = 0$/);
    expect(statement).toContain('"shelves"."shelf_label"');
    expect(statement).toContain('"pots"."id"');
  });

  it.each([
    ['a table is renamed', 'ALTER TABLE pots RENAME TO pots_old'],
    ['a table is dropped', 'DROP TABLE shelves'],
    ['a column is renamed', 'ALTER TABLE shelves RENAME COLUMN shelf_label TO label'],
  ])('is down when %s', async (_label, change) => {
    await dataSource.query(change);
    await expect(indicator.check('schema', 1000)).resolves.toEqual({ schema: { status: 'down' } });
  });

  it('is down when the database does not answer in time', async () => {
    jest.spyOn(dataSource, 'query').mockReturnValue(new Promise(() => undefined));
    await expect(indicator.check('schema', 20)).resolves.toEqual({ schema: { status: 'down' } });
  });
});
