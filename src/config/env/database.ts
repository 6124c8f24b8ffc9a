import { DriverUtils } from 'typeorm/driver/DriverUtils.js';
import { DURATION_UNIT_MS } from '../duration';
import { SettingValues, duration, integer, parsed, text } from '../settings';

/**
 * What is wrong with a MySQL URL, or undefined when nothing is. It is read as the service's
 * connection reads it: by TypeORM's own URL reader (DriverUtils, which its MySQL driver calls),
 * whose port mysql2 then connects to; a value it cannot read, or would misread, is refused here.
 */
function databaseUrlProblem(value: string): string | undefined {
  if (!/^(mysql|mariadb):\/\//.test(value)) return 'its scheme is not mysql or mariadb';
  if (!/^[a-z]+:\/\/\S+$/.test(value)) return 'it is empty after the scheme, or has white space in it';
  let read: { host?: string; port?: number };
  try {
    read = DriverUtils.buildDriverOptions({ url: value }) as typeof read;
  } catch {
    return 'its user name or password is not valid percent-encoding';
  }
  // TypeORM splits the host from the port at every colon: an IPv6 address would come out as "[".
  if (read.host !== undefined && /[[\]]/.test(read.host))
    return 'an IPv6 address cannot be read from it: use a host name';
  if (read.port !== undefined && !(Number.isInteger(read.port) && read.port >= 1 && read.port <= 65535)) {
    return 'its port is not a number from 1 to 65535';
  }
  return undefined;
}

/** Where the plants are kept: a MySQL or MariaDB server, or the embedded SQLite file. */
export const databaseSettings = {
  DATABASE_URL: parsed((value) => (databaseUrlProblem(value) === undefined ? value : undefined), {
    example: 'mysql://plantstore:plantstore@127.0.0.1:3306/plantstore',
    message: (value) =>
      `$property must be a URL of the form mysql://user:password@host:3306/database (mariadb:// for a MariaDB server); ${databaseUrlProblem(value)}`,
    description:
      '`mysql://user:password@host:3306/database` runs on MySQL; use `mariadb://...` for a MariaDB server. The host is a name or an IPv4 address (TypeORM cannot read an IPv6 address from the URL); the user name and password are percent-encoded. Unset: the embedded SQLite file.',
  }),
  SQLITE_PATH: text({
    default: 'data/plant-store.sqlite',
    description: 'The embedded database file (created with its folder).',
  }),
  DB_POOL_SIZE: integer({ min: 1, max: 1000, default: 10, description: 'MySQL connections per instance.' }),
  DB_CONNECT_TIMEOUT_MS: integer({
    min: 100,
    max: 60_000,
    default: 5000,
    description: 'How long to wait for a MySQL connection before answering 503.',
  }),
  DB_QUERY_TIMEOUT_MS: integer({
    min: 100,
    max: 600_000,
    default: 5000,
    description:
      'How long a MySQL statement may go unanswered before the request gets 503 and the connection is replaced, so a silent network never holds requests. Counted as the event loop sees it: an answer that arrived while the loop was busy is read first.',
  }),
  DB_STARTUP_TIMEOUT: duration({
    units: ['ms', 's', 'm', 'h'],
    min: 0,
    max: DURATION_UNIT_MS.h,
    default: '60s',
    message: '$property must be a duration from 0s to 1h, such as 60s or 5m (units ms, s, m, h)',
    description:
      'How long an instance, or the command line, keeps trying to reach the database when it starts, logging each failed attempt and why, before it gives up and exits with 1: 0s to 1h, a duration (units `ms`, `s`, `m`, `h`). `0s`: one attempt.',
  }),
};

export function databaseConfig(env: SettingValues<typeof databaseSettings>) {
  const url = env.DATABASE_URL;
  return {
    database: url
      ? {
          // Both go through mysql2; the flavour only tells TypeORM how to read the server's schema.
          type: url.startsWith('mariadb:') ? ('mariadb' as const) : ('mysql' as const),
          url: url.replace(/^mariadb:/, 'mysql:'),
          poolSize: env.DB_POOL_SIZE,
          connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
          queryTimeoutMs: env.DB_QUERY_TIMEOUT_MS,
        }
      : { type: 'sqlite' as const, path: env.SQLITE_PATH },
    databaseStartup: { timeoutMs: env.DB_STARTUP_TIMEOUT },
  };
}
