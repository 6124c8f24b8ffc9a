import { authConfig, authSettings } from './env/auth';
import { databaseConfig, databaseSettings } from './env/database';
import { idempotencyConfig, idempotencySettings } from './env/idempotency';
import { loggingConfig, loggingSettings } from './env/logging';
import { metricsConfig, metricsSettings } from './env/metrics';
import { plantsConfig, plantsSettings } from './env/plants';
import { rateLimitConfig, rateLimitSettings } from './env/rate-limit';
import { serverConfig, serverSettings } from './env/server';
import { webhooksConfig, webhooksSettings } from './env/webhooks';
import { readSettings } from './settings';

export { ConfigValidationError } from './settings';

/**
 * Every environment variable the service reads, declared once in its area's table under env/; in
 * this order in docs/configuration.md and .env.example, which are written from it.
 */
export const SETTINGS = {
  ...serverSettings,
  ...databaseSettings,
  ...plantsSettings,
  ...authSettings,
  ...loggingSettings,
  ...metricsSettings,
  ...rateLimitSettings,
  ...webhooksSettings,
  ...idempotencySettings,
};

/** The names of every environment variable the service reads: the docs and the container files are checked against it. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(SETTINGS);

/**
 * The log settings alone, read before the rest so that the process's first line, the report of a
 * wrong setting included, is already in the configured format. A log setting that is wrong itself
 * counts as unset here; loadConfig reports it with the others.
 */
export function loadLogConfig(raw: Record<string, unknown>): LogConfig {
  const table = { NODE_ENV: serverSettings.NODE_ENV, ...loggingSettings };
  const valid = Object.fromEntries(
    Object.entries(table).flatMap(([name, setting]) => {
      try {
        readSettings({ [name]: setting }, raw);
        return [[name, raw[name]]];
      } catch {
        return [];
      }
    }),
  );
  return loggingConfig(readSettings(table, valid)).log;
}

/** The validated, typed configuration; a wrong value throws a ConfigValidationError naming every wrong variable. */
export function loadConfig(raw: Record<string, unknown>) {
  const env = readSettings(SETTINGS, raw);
  return {
    ...serverConfig(env),
    ...databaseConfig(env),
    ...plantsConfig(env),
    ...authConfig(env),
    ...loggingConfig(env),
    ...metricsConfig(env),
    ...rateLimitConfig(env),
    ...webhooksConfig(env),
    ...idempotencyConfig(env),
  };
}

/** The configuration the rest of the service reads, through ConfigService<AppConfig, true>. */
export type AppConfig = ReturnType<typeof loadConfig>;
export type DatabaseConfig = AppConfig['database'];
export type OidcConfig = NonNullable<AppConfig['oidc']>;
export type WebhooksConfig = AppConfig['webhooks'];
export type LogConfig = AppConfig['log'];
export type LogLevel = LogConfig['level'];
