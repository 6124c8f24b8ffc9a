import { isIP } from 'node:net';
import { compile } from 'proxy-addr';
import { SettingValues, integer, oneOf, parsed } from '../settings';

const CORS_ORIGINS = /^(\*|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)$/;
/** A DNS name (RFC 1123 labels; `_` too, as container names have it), with an optional final dot. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** HOST as the listener resolves it: an IP address, or a name to look up. */
function listenHost(value: string): string | undefined {
  return isIP(value) !== 0 || HOST_NAME.test(value) ? value : undefined;
}

/**
 * TRUST_PROXY read as Express reads its `trust proxy` setting: `true`, `false`, a number of hops,
 * or a comma-separated list that proxy-addr, Express's own parser, compiles.
 */
function trustProxy(value: string): boolean | number | string | undefined {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  const list = value.split(',').map((part) => part.trim());
  return list.every((part) => trustProxyProblem(part) === undefined) ? list.join(',') : undefined;
}

/** What proxy-addr finds wrong with one entry of the list, without repeating its text unquoted. */
function trustProxyProblem(entry: string): string | undefined {
  try {
    compile(entry);
    return undefined;
  } catch (error) {
    const why = /^invalid range/.test((error as Error).message)
      ? 'has a prefix length or netmask out of range'
      : 'is not an IP address, a subnet or one of those names';
    return `${JSON.stringify(entry)} ${why}`;
  }
}

/** How the service listens, whom it believes, and how it stops. */
export const serverSettings = {
  NODE_ENV: oneOf(['development', 'production', 'test'], {
    default: 'development',
    description:
      '`development`, `production` or `test`. Outside production, an empty embedded database gets a development token; in development, without `WEBHOOK_SECRET_KEY`, the embedded database gets a development webhook key.',
  }),
  HOST: parsed(listenHost, {
    defaultText: 'all interfaces',
    example: '127.0.0.1',
    message: '$property must be an IP address or a host name, such as 127.0.0.1, :: or localhost',
    description: 'Address to listen on: an IP address or a host name, e.g. `127.0.0.1`.',
  }),
  PORT: integer({ min: 0, max: 65535, default: 3000, description: 'HTTP port.' }),
  CORS_ORIGINS: parsed(
    (value) => {
      if (!CORS_ORIGINS.test(value)) return undefined;
      return value === '*' ? ('*' as const) : value.split(',').map((origin) => origin.trim());
    },
    {
      example: 'http://localhost:5173',
      message:
        '$property must be * or a comma-separated list of origins such as https://app.example.com,http://localhost:5173',
      description:
        'Browser origins allowed to call the API: `*`, or a comma-separated list such as `https://app.example.com,http://localhost:5173`. Unset: no CORS headers.',
    },
  ),
  TRUST_PROXY: parsed(trustProxy, {
    default: 'false',
    example: 'loopback',
    message: (value) =>
      '$property must be true, false, a number of proxy hops, or a comma-separated list of proxy addresses, subnets or the names loopback, linklocal, uniquelocal; ' +
      value
        .split(',')
        .map((part) => trustProxyProblem(part.trim()))
        .filter((problem) => problem !== undefined)
        .join('; '),
    description:
      "Which proxies' `X-Forwarded-For` is believed, which decides the client address used for rate limits, logs and traces: `false` (none), `true` (any), a number of proxy hops, or a comma-separated list of proxy addresses, subnets or `loopback`, `linklocal`, `uniquelocal`.",
  }),
  SHUTDOWN_TIMEOUT_MS: integer({
    min: 0,
    max: 600_000,
    default: 10_000,
    description:
      'How long in-flight requests get to finish after SIGTERM (and after `SHUTDOWN_DELAY_MS`). Give the container a stop grace period longer than both together.',
  }),
  SHUTDOWN_DELAY_MS: integer({
    min: 0,
    max: 600_000,
    default: 0,
    description:
      'After SIGTERM, how long the instance keeps serving while `/health/ready` answers 503, so a load balancer that learns from readiness probes stops sending it traffic first.',
  }),
};

export function serverConfig(env: SettingValues<typeof serverSettings>) {
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    http: { corsOrigins: env.CORS_ORIGINS ?? null, trustProxy: env.TRUST_PROXY },
    shutdown: { delayMs: env.SHUTDOWN_DELAY_MS, timeoutMs: env.SHUTDOWN_TIMEOUT_MS },
  };
}
