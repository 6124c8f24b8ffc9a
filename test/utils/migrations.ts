import { DataSource } from 'typeorm';

/** The names of the migrations the database records as applied. */
async function appliedMigrations(dataSource: DataSource): Promise<string[]> {
  const table = dataSource.driver.escape(dataSource.options.migrationsTableName ?? 'migrations');
  return ((await dataSource.query(`SELECT name FROM ${table}`)) as { name: string }[]).map((row) => row.name);
}

/**
 * Undoes the last applied migration until none of `names` is applied, so whatever was applied after
 * them goes too. Counting them would not do: a database migrated in one go applied the migrations
 * in timestamp order, one started and then contracted applied the post-deployment ones last.
 */
export async function undoMigrations(dataSource: DataSource, names: readonly string[]): Promise<void> {
  while ((await appliedMigrations(dataSource)).some((name) => names.includes(name)))
    await dataSource.undoLastMigration();
}
