import { DataSource } from 'typeorm';

interface PoolLike {
  on(event: 'connection', listener: (connection: QueryableConnection) => void): unknown;
  _allConnections?: { toArray?: () => QueryableConnection[] };
}
interface QueryableConnection {
  query(sql: string, callback: (error: unknown) => void): unknown;
}

/** What this release's sessions tell the previous release's triggers (EventsRecordedByTheService migration). */
export const RECORDS_EVENTS = 'SET @plant_store_records_events = 1';
const ignore = () => undefined;

/**
 * On a database upgraded from the release whose triggers recorded webhook events, the triggers stay
 * until the next release, recording for instances of the previous release only; this release
 * records its events itself, so each of its sessions says so before its first statement. Where the
 * triggers are gone (or never were) nothing changes, not even the statements sent per connection.
 * Whether they exist is asked once, after the migrations: they are only ever removed, never added.
 */
export async function standAsideEventTriggers(dataSource: DataSource): Promise<boolean> {
  if (dataSource.options.type !== 'mysql' && dataSource.options.type !== 'mariadb') return false;
  const rows = (await dataSource.query(
    "SELECT 1 FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'plants\\_webhook\\_%'",
  )) as unknown[];
  if (rows.length === 0) return false;
  const pool = (dataSource.driver as unknown as { pool?: PoolLike }).pool;
  if (!pool) return true;
  // mysql2 emits 'connection' before handing a new connection out, so the setting always precedes
  // the first statement; a user variable lasts as long as the connection.
  const mark = (connection: QueryableConnection) => connection.query(RECORDS_EVENTS, ignore);
  pool.on('connection', mark);
  for (const connection of pool._allConnections?.toArray?.() ?? []) mark(connection);
  return true;
}
