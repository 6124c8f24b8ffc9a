import { plainToInstance } from 'class-transformer';
import {
  getMetadataStorage,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidateIf,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
  validateSync,
} from 'class-validator';
import { REDIS_URL_FORMS, RedisUrlError, parseRedisUrl } from './redis-url';

/** The validated, typed configuration the rest of the service reads. */
export interface AppConfig {
  env: 'development' | 'production' | 'test';
  host?: string;
  port: number;
  database: DatabaseConfig;
  plants: { maxPage: number };
  auth: { tokenCacheTtlMs: number };
  /** Null unless OIDC_ISSUER is set. */
  oidc: OidcConfig | null;
  log: { level: LogLevel; pretty: boolean };
  metrics: { port: number };
  rateLimit: { perMinute: number; redisUrl?: string };
  http: { corsOrigins: string[] | '*' | null; trustProxy: boolean | number | string };
  shutdown: { delayMs: number; timeoutMs: number };
  secrets: SecretsConfig;
  webhooks: WebhooksConfig;
  /** How long the answer to a request with an Idempotency-Key is kept for its repeats. */
  idempotency: { ttlMs: number };
}

export interface SecretsConfig {
  /** Keys that seal stored secrets: the first seals, all open (rotation). Empty: webhooks are off. */
  keys: Buffer[];
}

export interface WebhooksConfig {
  /** Waits before the 2nd, 3rd, ... attempt; after the last the event is marked failed. */
  retryScheduleMs: number[];
  /** A subscription failing without a success for this long is disabled. */
  disableAfterMs: number;
  /** One attempt (resolve, connect, response) is cut after this long. */
  timeoutMs: number;
  allowHttp: boolean;
  allowPrivate: boolean;
  /** How often an instance looks for due deliveries. */
  pollIntervalMs: number;
  /** Attempts one instance runs at once. */
  concurrency: number;
}

export interface OidcConfig {
  issuer: string;
  audience: string;
  ownerClaim: string;
  /** How long fetched signing keys are used before they must be fetched again. */
  jwksCacheMs: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type DatabaseConfig =
  | { type: 'mysql' | 'mariadb'; url: string; poolSize: number; connectTimeoutMs: number; queryTimeoutMs: number }
  | { type: 'sqlite'; path: string };

/** After the Standard Webhooks guidance: 8 attempts over about 27 hours and a half. */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

export const DEFAULT_SQLITE_PATH = 'data/plant-store.sqlite';

@ValidatorConstraint({ name: 'redisUrl' })
class IsRedisUrl implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && this.problem(value) === undefined;
  }

  defaultMessage(args: ValidationArguments): string {
    const problem = typeof args.value === 'string' ? this.problem(args.value) : 'it is not a string';
    return `${args.property} must be a URL of the form ${REDIS_URL_FORMS}; ${problem}`;
  }

  private problem(value: string): string | undefined {
    try {
      parseRedisUrl(value);
      return undefined;
    } catch (error) {
      if (error instanceof RedisUrlError) return error.message;
      throw error;
    }
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An issuer is an https URL without query or fragment (OpenID Connect Discovery); http only on loopback. */
@ValidatorConstraint({ name: 'issuerUrl' })
class IsIssuerUrl implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return false;
    }
    if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be the issuer's https URL, such as https://id.example.com/realms/plants (http only for localhost or 127.0.0.1), without query or fragment`;
  }
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

/** `5s`, `30m`, `2h`, `5d`, `250ms` in milliseconds; undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  return match ? Number(match[1]) * DURATION_UNITS_MS[match[2]] : undefined;
}

const MAX_IDEMPOTENCY_TTL_MS = 30 * 86_400_000;

/** `IDEMPOTENCY_TTL`: a duration from 1 second to 30 days. */
function parseIdempotencyTtl(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms !== undefined && ms >= 1000 && ms <= MAX_IDEMPOTENCY_TTL_MS ? ms : undefined;
}

const MAX_RETRY_DELAY_MS = 7 * 86_400_000;

/** A comma-separated list of 1 to 20 durations of at most 7 days, each at least 1 ms. */
function parseRetrySchedule(text: string): number[] | undefined {
  const delays = text.split(',').map(parseDuration);
  if (delays.length > 20 || delays.some((d) => d === undefined || d < 1 || d > MAX_RETRY_DELAY_MS)) return undefined;
  return delays as number[];
}

/** `WEBHOOK_SECRET_KEY`: one or more comma-separated base64 keys of 32 bytes each. */
function parseSecretKeys(text: string): Buffer[] | undefined {
  const keys = text.split(',').map((part) => part.trim());
  if (keys.some((key) => !/^[A-Za-z0-9+/_-]{43}=?$/.test(key))) return undefined;
  const decoded = keys.map((key) => Buffer.from(key.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  return decoded.every((key) => key.length === 32) ? decoded : undefined;
}

@ValidatorConstraint({ name: 'parsed' })
class Parses implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    const [parse] = args.constraints as [(text: string) => unknown];
    return typeof value === 'string' && parse(value) !== undefined;
  }
}

/**
 * The environment variables the service understands. Every one of them is listed in the README's
 * configuration table; a wrong value stops start-up with a message naming the variable.
 */
class EnvironmentVariables {
  @IsOptional()
  @IsIn(['development', 'production', 'test'])
  NODE_ENV?: AppConfig['env'];

  @IsOptional()
  @IsString()
  @MinLength(1)
  HOST?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @Matches(/^(mysql|mariadb):\/\/[^\s]+$/, {
    message:
      'DATABASE_URL must be a URL of the form mysql://user:password@host:3306/database (mariadb:// for a MariaDB server)',
  })
  DATABASE_URL?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  SQLITE_PATH?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  DB_POOL_SIZE?: number;

  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(60000)
  DB_CONNECT_TIMEOUT_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(600_000)
  DB_QUERY_TIMEOUT_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10000)
  PLANTS_MAX_PAGE?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(300_000)
  TOKEN_CACHE_TTL_MS?: number;

  @IsOptional()
  @Validate(IsIssuerUrl)
  OIDC_ISSUER?: string;

  @ValidateIf((env: EnvironmentVariables) => env.OIDC_ISSUER !== undefined || env.OIDC_AUDIENCE !== undefined)
  @IsString({
    message: 'OIDC_AUDIENCE is required with OIDC_ISSUER: the audience (resource indicator) of access tokens',
  })
  OIDC_AUDIENCE?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9_:./-]{1,100}$/, {
    message: 'OIDC_OWNER_CLAIM must be the name of a claim (letters, digits and _ : . / -), such as sub or org_id',
  })
  OIDC_OWNER_CLAIM?: string;

  @IsOptional()
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  OIDC_JWKS_CACHE_MS?: number;

  @IsOptional()
  @IsIn(LOG_LEVELS)
  LOG_LEVEL?: LogLevel;

  @IsOptional()
  @IsIn(['json', 'pretty'])
  LOG_FORMAT?: 'json' | 'pretty';

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  RATE_LIMIT_PER_MINUTE?: number;

  @IsOptional()
  @Validate(IsRedisUrl)
  REDIS_URL?: string;

  @IsOptional()
  @Matches(/^(\*|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)$/, {
    message:
      'CORS_ORIGINS must be * or a comma-separated list of origins such as https://app.example.com,http://localhost:5173',
  })
  CORS_ORIGINS?: string;

  @IsOptional()
  @Matches(/^(true|false|\d{1,2}|[\w.:/]+(\s*,\s*[\w.:/]+)*)$/, {
    message:
      'TRUST_PROXY must be true, false, a number of proxy hops, or a comma-separated list of proxy addresses, subnets or the names loopback, linklocal, uniquelocal',
  })
  TRUST_PROXY?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_TIMEOUT_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_DELAY_MS?: number;

  @IsOptional()
  @Validate(Parses, [parseSecretKeys], {
    message:
      'WEBHOOK_SECRET_KEY must be one or more comma-separated keys of 32 random bytes in base64, such as the output of `openssl rand -base64 32`',
  })
  WEBHOOK_SECRET_KEY?: string;

  @IsOptional()
  @Validate(Parses, [parseRetrySchedule], {
    message:
      'WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated durations of at most 7 days, such as 5s,5m,30m,2h,5h,10h,10h (units ms, s, m, h, d)',
  })
  WEBHOOK_RETRY_SCHEDULE?: string;

  @IsOptional()
  @Validate(Parses, [parseDuration], {
    message: 'WEBHOOK_DISABLE_AFTER must be a duration such as 5d, 12h or 30m (units ms, s, m, h, d)',
  })
  WEBHOOK_DISABLE_AFTER?: string;

  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(10_000)
  WEBHOOK_TIMEOUT_MS?: number;

  @IsOptional()
  @IsIn(['true', 'false'])
  WEBHOOK_ALLOW_HTTP?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  WEBHOOK_ALLOW_PRIVATE?: string;

  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(60_000)
  WEBHOOK_POLL_INTERVAL_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_CONCURRENCY?: number;

  @IsOptional()
  @Validate(Parses, [parseIdempotencyTtl], {
    message: 'IDEMPOTENCY_TTL must be a duration from 1s to 30d, such as 24h, 90m or 7d (units ms, s, m, h, d)',
  })
  IDEMPOTENCY_TTL?: string;
}

/** The names of every environment variable the service reads: the README, .env.example and the compose file are checked against it. */
export const CONFIG_VARIABLES: readonly string[] = [
  ...new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(EnvironmentVariables, '', true, false)
      .map((metadata) => metadata.propertyName),
  ),
];

export class ConfigValidationError extends Error {
  override name = 'ConfigValidationError';
}

/** Empty strings count as unset, so `PORT=` in a .env file means "use the default". */
function withoutEmpty(env: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
}

/** Integers only when written as integers: "3000abc" or "1e3" must not slip through as numbers. */
function toIntegers(env: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out = { ...env };
  for (const key of keys) {
    const value = out[key];
    if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) out[key] = Number(value.trim());
  }
  return out;
}

const INTEGER_VARIABLES = [
  'PORT',
  'DB_POOL_SIZE',
  'DB_CONNECT_TIMEOUT_MS',
  'DB_QUERY_TIMEOUT_MS',
  'PLANTS_MAX_PAGE',
  'TOKEN_CACHE_TTL_MS',
  'OIDC_JWKS_CACHE_MS',
  'METRICS_PORT',
  'RATE_LIMIT_PER_MINUTE',
  'SHUTDOWN_TIMEOUT_MS',
  'SHUTDOWN_DELAY_MS',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_POLL_INTERVAL_MS',
  'WEBHOOK_CONCURRENCY',
];

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value
    .split(',')
    .map((part) => part.trim())
    .join(',');
}

function parseCorsOrigins(value: string | undefined): string[] | '*' | null {
  if (value === undefined) return null;
  if (value === '*') return '*';
  return value.split(',').map((origin) => origin.trim());
}

/** Variables whose value is a secret as a whole: a wrong one is never echoed. */
const SECRET_VARIABLES = new Set(['WEBHOOK_SECRET_KEY']);

/** A wrong URL is echoed in the error, so the password it may carry is masked first. */
function redactSecrets(value: unknown, name: string): unknown {
  if (typeof value !== 'string') return value;
  if (SECRET_VARIABLES.has(name)) return `*** (${value.length} characters)`;
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/i, '$1***@').replace(/([?&][a-z]*password=)[^&#]*/gi, '$1***');
}

export function loadConfig(rawEnv: Record<string, unknown>): AppConfig {
  const env = plainToInstance(EnvironmentVariables, toIntegers(withoutEmpty(rawEnv), INTEGER_VARIABLES));
  const errors = validateSync(env, { skipMissingProperties: false });
  if (errors.length > 0) {
    const lines = errors.flatMap((error) =>
      Object.values(error.constraints ?? {}).map(
        (message) => `  - ${message} (got ${JSON.stringify(redactSecrets(rawEnv[error.property], error.property))})`,
      ),
    );
    throw new ConfigValidationError(`Invalid configuration:\n${lines.join('\n')}`);
  }

  const database: DatabaseConfig = env.DATABASE_URL
    ? {
        // Both go through mysql2; the flavour only tells TypeORM how to read the server's schema.
        type: env.DATABASE_URL.startsWith('mariadb:') ? 'mariadb' : 'mysql',
        url: env.DATABASE_URL.replace(/^mariadb:/, 'mysql:'),
        poolSize: env.DB_POOL_SIZE ?? 10,
        connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS ?? 5000,
        queryTimeoutMs: env.DB_QUERY_TIMEOUT_MS ?? 5000,
      }
    : { type: 'sqlite', path: env.SQLITE_PATH ?? DEFAULT_SQLITE_PATH };

  const nodeEnv = env.NODE_ENV ?? 'development';
  return {
    env: nodeEnv,
    host: env.HOST,
    port: env.PORT ?? 3000,
    database,
    plants: { maxPage: env.PLANTS_MAX_PAGE ?? 1000 },
    auth: { tokenCacheTtlMs: env.TOKEN_CACHE_TTL_MS ?? 5000 },
    oidc:
      env.OIDC_ISSUER === undefined
        ? null
        : {
            issuer: env.OIDC_ISSUER,
            audience: env.OIDC_AUDIENCE!,
            ownerClaim: env.OIDC_OWNER_CLAIM ?? 'sub',
            jwksCacheMs: env.OIDC_JWKS_CACHE_MS ?? 600_000,
          },
    log: {
      level: env.LOG_LEVEL ?? 'info',
      pretty: (env.LOG_FORMAT ?? (nodeEnv === 'development' ? 'pretty' : 'json')) === 'pretty',
    },
    metrics: { port: env.METRICS_PORT ?? 9464 },
    rateLimit: { perMinute: env.RATE_LIMIT_PER_MINUTE ?? 600, redisUrl: env.REDIS_URL },
    http: { corsOrigins: parseCorsOrigins(env.CORS_ORIGINS), trustProxy: parseTrustProxy(env.TRUST_PROXY) },
    shutdown: { delayMs: env.SHUTDOWN_DELAY_MS ?? 0, timeoutMs: env.SHUTDOWN_TIMEOUT_MS ?? 10_000 },
    secrets: { keys: env.WEBHOOK_SECRET_KEY === undefined ? [] : parseSecretKeys(env.WEBHOOK_SECRET_KEY)! },
    webhooks: {
      retryScheduleMs: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_RETRY_SCHEDULE)!,
      disableAfterMs: parseDuration(env.WEBHOOK_DISABLE_AFTER ?? '5d')!,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS ?? 10_000,
      allowHttp: env.WEBHOOK_ALLOW_HTTP === 'true',
      allowPrivate: env.WEBHOOK_ALLOW_PRIVATE === 'true',
      pollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS ?? 1000,
      concurrency: env.WEBHOOK_CONCURRENCY ?? 16,
    },
    idempotency: { ttlMs: parseIdempotencyTtl(env.IDEMPOTENCY_TTL ?? '24h')! },
  };
}
