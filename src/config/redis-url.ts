/** A Redis primary found through Sentinel, in the terms of ioredis's Sentinel options. */
export interface SentinelGroup {
  /** The group's name (Sentinel's `monitor <name>`), e.g. `mymaster`. */
  name: string;
  sentinels: { host: string; port: number }[];
  db: number;
  /** For the Redis primary (and replicas): the URL's user information. */
  username?: string;
  password?: string;
  /** For the sentinels themselves, when they require it: `?sentinelUsername=&sentinelPassword=`. */
  sentinelUsername?: string;
  sentinelPassword?: string;
}

/** Where the shared rate-limit counts live, as REDIS_URL describes it. */
export type RedisTarget = { kind: 'server'; url: string } | { kind: 'sentinel'; group: SentinelGroup };

export const DEFAULT_SENTINEL_PORT = 26379;

export const REDIS_URL_FORMS =
  'redis://[:password@]host:6379[/db] (rediss:// for TLS) or redis+sentinel://[:password@]host1:26379,host2:26379,host3:26379/mymaster[/db]';

const SENTINEL_PARAMETERS = new Set(['sentinelUsername', 'sentinelPassword']);

export class RedisUrlError extends Error {
  override name = 'RedisUrlError';
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new RedisUrlError(`its ${what} is not valid percent-encoding`);
  }
}

function parseSentinelAddress(address: string): { host: string; port: number } {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s[\]:]+)(?::(\d{1,5}))?$/.exec(address);
  if (!match) throw new RedisUrlError(`sentinel address ${JSON.stringify(address)} is not host or host:port`);
  const port = match[2] === undefined ? DEFAULT_SENTINEL_PORT : Number(match[2]);
  if (port < 1 || port > 65535) throw new RedisUrlError(`sentinel port ${port} is out of range`);
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/**
 * A `redis://` or `rediss://` URL that ioredis can read as it reads it (its parser calls the WHATWG
 * URL parser, percent-decodes the user name and password, and selects the database the path
 * names); ioredis would otherwise throw at start-up, quoting the URL, password and all, or select
 * a database that is not one.
 */
function checkedServerUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RedisUrlError('it is not a URL (a port that is not a number from 0 to 65535, say)');
  }
  decode(url.username, 'user name');
  decode(url.password, 'password');
  const db = url.pathname.replace(/^\/|\/$/g, '');
  if (db !== '' && !/^\d{1,5}$/.test(db)) throw new RedisUrlError(`its database ${JSON.stringify(db)} is not a number`);
  return value;
}

/**
 * Reads REDIS_URL. A `redis://` or `rediss://` URL is handed to ioredis as it is; the Sentinel form
 * `redis+sentinel://[[user]:password@]host1[:port],host2[:port]/name[/db][?sentinelPassword=...]`
 * (the one Harbor and other Sentinel clients read) becomes ioredis's Sentinel options. Throws a
 * RedisUrlError that never repeats the password.
 */
export function parseRedisUrl(value: string): RedisTarget {
  if (/^rediss?:\/\/[^\s]+$/.test(value)) return { kind: 'server', url: checkedServerUrl(value) };
  if (!value.startsWith('redis+sentinel://'))
    throw new RedisUrlError('its scheme is not redis, rediss or redis+sentinel');
  const match =
    /^redis\+sentinel:\/\/(?:([^@/?#\s]*)@)?([^@/?#\s]+)\/([^/?#\s]+)(?:\/([^/?#\s]*))?\/?(?:\?([^#\s]*))?$/.exec(
      value,
    );
  if (!match)
    throw new RedisUrlError('it does not read as redis+sentinel://[:password@]host1:26379,host2:26379/mymaster[/db]');
  const [, userInfo, hosts, name, db, query] = match;

  const sentinels = hosts.split(',').map((address) => parseSentinelAddress(address.trim()));
  const group: SentinelGroup = { name: decode(name, 'group name'), sentinels, db: 0 };

  if (db !== undefined && db !== '') {
    if (!/^\d{1,5}$/.test(db)) throw new RedisUrlError(`its database ${JSON.stringify(db)} is not a number`);
    group.db = Number(db);
  }
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':');
    const username = colon < 0 ? userInfo : userInfo.slice(0, colon);
    const password = colon < 0 ? '' : userInfo.slice(colon + 1);
    if (username) group.username = decode(username, 'user name');
    if (password) group.password = decode(password, 'password');
  }
  for (const [key, parameter] of new URLSearchParams(query ?? '')) {
    if (!SENTINEL_PARAMETERS.has(key)) {
      throw new RedisUrlError(
        `its parameter ${JSON.stringify(key)} is not one of ${[...SENTINEL_PARAMETERS].join(', ')}`,
      );
    }
    if (parameter) group[key as 'sentinelUsername' | 'sentinelPassword'] = parameter;
  }
  return { kind: 'sentinel', group };
}
