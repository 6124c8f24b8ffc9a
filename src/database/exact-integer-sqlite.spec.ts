import { ExactIntegerDatabase } from './exact-integer-sqlite';

describe(ExactIntegerDatabase.name, () => {
  let db: ExactIntegerDatabase;

  beforeEach(() => {
    db = new ExactIntegerDatabase(':memory:');
    db.exec('CREATE TABLE t (id BIGINT PRIMARY KEY, n INTEGER NOT NULL)');
  });
  afterEach(() => db.close());

  it('reads integers beyond 2^53 exactly, as BigInt', () => {
    db.prepare('INSERT INTO t (id, n) VALUES (?, ?)').run(9223372036854775807n, 1);
    db.prepare('INSERT INTO t (id, n) VALUES (?, ?)').run('9007199254740993', 2);
    const rows = db.prepare('SELECT id, n FROM t ORDER BY id').all() as { id: bigint; n: bigint }[];
    expect(rows).toEqual([
      { id: 9007199254740993n, n: 2n },
      { id: 9223372036854775807n, n: 1n },
    ]);
  });

  it('leaves schema introspection as plain numbers, as TypeORM expects', () => {
    const columns = db.prepare('PRAGMA table_info("t")').all() as { name: string; notnull: unknown; pk: unknown }[];
    expect(columns.map(({ name, notnull, pk }) => ({ name, notnull, pk }))).toEqual([
      { name: 'id', notnull: 0, pk: 1 },
      { name: 'n', notnull: 1, pk: 0 },
    ]);
  });

  it('still runs statements that return no rows', () => {
    const result = db.prepare('INSERT INTO t (id, n) VALUES (1, 1)').run();
    expect(result.changes).toBe(1);
  });
});
