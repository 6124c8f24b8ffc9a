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

/** A wrong URL is echoed in the error, so the password it may carry is masked first. */
function redactSecrets(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/i, '$1***@').replace(/([?&][a-z]*password=)[^&#]*/gi, '$1***');
}

export function loadConfig(rawEnv: Record<string, unknown>): AppConfig {
  const env = plainToInstance(EnvironmentVariables, toIntegers(withoutEmpty(rawEnv), INTEGER_VARIABLES));
  const errors = validateSync(env, { skipMissingProperties: false });
  if (errors.length > 0) {
    const lines = errors.flatMap((error) =>
      Object.values(error.constraints ?? {}).map(
        (message) => `  - ${message} (got ${JSON.stringify(redactSecrets(rawEnv[error.property]))})`,
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
  };
}
