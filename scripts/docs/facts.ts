import { join } from 'node:path';
import { JWKS_COOLDOWN_MS, JWT_CLOCK_TOLERANCE_S, PROVIDER_TIMEOUT_MS } from '../../src/auth/oidc/jwt-verifier';
import { JWT_CACHE_MAX_ENTRIES } from '../../src/auth/auth.limits';
import { SCOPE_NAMES } from '../../src/auth/scopes';
import { REJECTED_CACHE_MAX_ENTRIES, TOKEN_CACHE_MAX_ENTRIES } from '../../src/auth/auth.limits';
import { BODY_LIMIT_BYTES, MAX_JSON_DEPTH } from '../../src/common/json/json-body.limits';
import { SETTINGS } from '../../src/config/configuration';
import { IN_FLIGHT_LEASE_MS, PURGE_BATCH, PURGE_MAX_BATCHES } from '../../src/idempotency/idempotency.limits';
import { PLANT_NAME_MAX_LENGTH, PLANT_TAG_MAX_LENGTH } from '../../src/plants/plants.limits';
import { INT32_MAX } from '../../src/plants/plants.limits';
import { SCHEMA_CHANGE_PROGRESS_SECONDS } from '../../src/database/galera-schema-change';
import { RATE_LIMIT_WINDOW_MS } from '../../src/rate-limit/rate-limit.limits';
import { MAX_URL_LENGTH } from '../../src/webhooks/webhooks.limits';
import { WEBHOOK_DESCRIPTION_MAX_LENGTH } from '../../src/webhooks/webhooks.limits';
import { PRUNE_EVERY_MS, RETENTION_MS } from '../../src/webhooks/webhooks.limits';
import { MAX_RESPONSE_BODY_BYTES } from '../../src/webhooks/webhooks.limits';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from '../../src/webhooks/webhooks.limits';
import { RECENT_ATTEMPTS } from '../../src/webhooks/webhooks.limits';
import { MIGRATION_DEADLOCK_TRIES } from '../../src/database/migrations-runner';
import {
  FEED_KNOWN_FOR_MS,
  FEED_MAX_OWNERS,
  FEED_POLL_MS,
  FEED_REREAD_MS,
} from '../../src/webhooks/subscriptions/subscribed-owners';
import {
  DEFAULT_SECRET_GRACE_SECONDS,
  EVENTS_DEFAULT_PAGE,
  EVENTS_MAX_PAGE,
  MAX_SECRET_GRACE_SECONDS,
  RECOVER_BATCH,
} from '../../src/webhooks/webhooks.limits';
import { exampleFacts, schemasOf } from './examples';
import { Fact, Facts } from './fragments';
import { alertFacts, alertsTable, panelsTable } from './monitoring';
import { bytes, code, count, duration, listed, ordinal } from './readable';
import { retryScheduleFacts } from './retry-schedule';
import { constantFacts } from './constant-facts';
import { routesOf, routesSummary, routesTable } from './routes';
import { settingFacts } from './setting-facts';
import { settingsTable } from './settings';

export const ROOT = join(__dirname, '..', '..');

/**
 * Every fact the documents may state, by name, each read from the code that defines it (see
 * scripts/docs/fragments.ts for the markers), or from the committed openapi.json that it makes. A fact no document states is refused by the spec.
 */
export function facts(root = ROOT): Facts {
  const routes = routesOf(root);
  const text = (value: string | number): Fact => ({ text: String(value) });
  return {
    settings: { block: true, text: settingsTable(SETTINGS) },
    ...settingFacts(SETTINGS),
    ...constantFacts(),
    ...alertFacts(),
    routes: { block: true, text: routesTable(routes) },
    'routes:webhooks': {
      block: true,
      text: routesTable(routes.filter((route) => route.operation.tags?.includes('webhooks'))),
    },
    'routes-summary': { block: true, text: routesSummary(routes) },
    scopes: text(listed(SCOPE_NAMES.map(code))),
    // The monitoring that ships in deploy/observability.
    'dashboard-panels': { block: true, text: panelsTable() },
    alerts: { block: true, text: alertsTable() },
    // The request and its body.
    'body-limit': text(bytes(BODY_LIMIT_BYTES)),
    'schema-change-progress': text(duration(SCHEMA_CHANGE_PROGRESS_SECONDS * 1000)),
    'body-limit-bytes': text(BODY_LIMIT_BYTES),
    'json-depth': text(MAX_JSON_DEPTH),
    'plant-name-max': text(PLANT_NAME_MAX_LENGTH),
    'plant-tag-max': text(PLANT_TAG_MAX_LENGTH),
    'page-limit-max': text(INT32_MAX),
    'rate-limit-window-seconds': text(RATE_LIMIT_WINDOW_MS / 1000),
    // Tokens, and an identity provider's.
    'token-cache-entries': text(count(TOKEN_CACHE_MAX_ENTRIES)),
    'rejected-token-cache-entries': text(count(REJECTED_CACHE_MAX_ENTRIES)),
    'jwks-cooldown': text(duration(JWKS_COOLDOWN_MS)),
    'provider-timeout': text(duration(PROVIDER_TIMEOUT_MS)),
    'jwt-cache-entries': text(count(JWT_CACHE_MAX_ENTRIES)),
    'jwt-clock-tolerance': text(duration(JWT_CLOCK_TOLERANCE_S * 1000)),
    // Idempotency keys.
    'idempotency-lease': text(duration(IN_FLIGHT_LEASE_MS)),
    'idempotency-purge-batch': text(PURGE_BATCH),
    'idempotency-purge-batches': text(PURGE_MAX_BATCHES),
    // Webhooks.
    'webhook-url-max': text(MAX_URL_LENGTH),
    'webhook-description-max': text(WEBHOOK_DESCRIPTION_MAX_LENGTH),
    'subscriptions-per-user': text(MAX_SUBSCRIPTIONS_PER_OWNER),
    'subscription-past-limit': text(ordinal(MAX_SUBSCRIPTIONS_PER_OWNER + 1)),
    'recent-attempts': text(RECENT_ATTEMPTS),
    'feed-poll': text(duration(FEED_POLL_MS)),
    'feed-known-for': text(duration(FEED_KNOWN_FOR_MS)),
    'feed-max-owners': text(count(FEED_MAX_OWNERS)),
    'feed-reread': text(duration(FEED_REREAD_MS)),
    'migration-deadlock-tries': text(MIGRATION_DEADLOCK_TRIES),
    'delivery-retention': text(duration(RETENTION_MS)),
    'delivery-prune-interval': text(duration(PRUNE_EVERY_MS)),
    'response-body-limit': text(bytes(MAX_RESPONSE_BODY_BYTES)),
    'secret-grace-default': text(duration(DEFAULT_SECRET_GRACE_SECONDS * 1000)),
    'secret-grace-default-seconds': text(DEFAULT_SECRET_GRACE_SECONDS),
    'secret-grace-max': text(duration(MAX_SECRET_GRACE_SECONDS * 1000)),
    'secret-grace-max-seconds': text(MAX_SECRET_GRACE_SECONDS),
    'events-page-default': text(EVENTS_DEFAULT_PAGE),
    'events-page-max': text(count(EVENTS_MAX_PAGE)),
    'recover-batch': text(RECOVER_BATCH),
    ...retryScheduleFacts(),
    // The example bodies and the fields a body has, from the DTOs' declared examples.
    ...exampleFacts(schemasOf(root)),
  };
}

/**
 * Facts inside code blocks, where no marker can go: every match of the pattern in the file must
 * read, in its group, as the fact; and the pattern must match, so a rewording cannot hide it.
 */
export const QUOTED_IN_CODE: readonly { file: string; pattern: RegExp; fact: string }[] = [
  { file: 'docs/api.md', pattern: /RateLimit-Policy: "default";q=(\d+)/g, fact: 'default:RATE_LIMIT_PER_MINUTE' },
  { file: 'docs/api.md', pattern: /RateLimit-Policy: "default";q=\d+;w=(\d+)/g, fact: 'rate-limit-window-seconds' },
  { file: 'docs/api.md', pattern: /RateLimit: "default";r=(\d+)/g, fact: 'rate-limit-left-after-one' },
  { file: 'docs/api.md', pattern: /RateLimit: "default";r=\d+;t=(\d+)/g, fact: 'rate-limit-window-seconds' },
  {
    file: 'docs/api.md',
    pattern: /Too many requests: at most (\d+) per minute/g,
    fact: 'default:RATE_LIMIT_PER_MINUTE',
  },
  { file: 'docs/development.md', pattern: /`engines` admits exactly those \(`([^`]+)`/g, fact: 'engines' },
  {
    file: 'docs/operations.md',
    pattern: /# effective within TOKEN_CACHE_TTL_MS \(([^)]+)\)/g,
    fact: 'default:TOKEN_CACHE_TTL_MS',
  },
  { file: 'docs/operations.md', pattern: /secrets reseal \[--batch-size (\d+)\]/g, fact: 'reseal-batch' },
  {
    file: 'clients/typescript/README.md',
    pattern: /response\.rateLimit; .*\blimit: (\d+)/g,
    fact: 'default:RATE_LIMIT_PER_MINUTE',
  },
  {
    file: 'clients/typescript/README.md',
    pattern: /response\.rateLimit; .*\bwindowSeconds: (\d+)/g,
    fact: 'rate-limit-window-seconds',
  },
];
