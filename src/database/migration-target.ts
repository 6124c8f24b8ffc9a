import { QueryRunner } from 'typeorm';
import { DriverUtils } from 'typeorm/driver/DriverUtils.js';

/** Where the migrations run: the server and database of their connection, and its user. */
export interface SchemaChangeTarget {
  host: string;
  port: number;
  user: string;
  database: string;
}

/**
 * The server and database of the data source `queryRunner` belongs to, its password, and how long
 * a connection may take: what a tool or a connection of the migrations' own needs to reach it.
 */
export function targetOf(queryRunner: QueryRunner): {
  target: SchemaChangeTarget;
  password?: string;
  connectTimeout?: number;
} {
  const options = queryRunner.connection.options as { url?: string; connectTimeout?: number };
  // Read as the connection reads DATABASE_URL (src/config/env/database.ts).
  const read = DriverUtils.buildDriverOptions({ url: options.url }) as {
    host?: string;
    port?: number;
    username?: string;
    password?: string;
    database?: string;
  };
  return {
    target: {
      host: read.host ?? '127.0.0.1',
      port: read.port ?? 3306,
      user: read.username ?? '',
      database: read.database ?? '',
    },
    password: read.password || undefined,
    connectTimeout: options.connectTimeout,
  };
}
