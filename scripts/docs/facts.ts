import { join } from 'node:path';
import { SCOPE_NAMES } from '../../src/auth/scopes';
import { BODY_LIMIT_BYTES } from '../../src/common/json/json-body.errors';
import { SETTINGS } from '../../src/config/configuration';
import { Setting } from '../../src/config/settings';
import { RATE_LIMIT_WINDOW_MS } from '../../src/rate-limit/rate-limit.middleware';
import { Fact, Facts } from './fragments';
import { bytes, code, duration, listed } from './readable';
import { retryScheduleFacts } from './retry-schedule';
import { routesOf, routesSummary, routesTable } from './routes';
import { settingsTable } from './settings';

export const ROOT = join(__dirname, '..', '..');

/** A setting's default as prose states it: a duration in words, anything else as it is written. */
function defaultInProse(name: string, setting: Setting<unknown>): string | undefined {
  if (setting.default === undefined) return undefined;
  const isDuration = /_MS$/.test(name) || /^\d+(ms|s|m|h|d)$/.test(setting.default);
  return isDuration && typeof setting.defaultValue === 'number' ? duration(setting.defaultValue) : setting.default;
}

/** `default:NAME` for each setting with a default: what the docs mean by "(5 seconds by default)". */
function settingDefaults(): Facts {
  return Object.fromEntries(
    Object.entries(SETTINGS).flatMap(([name, setting]): [string, Fact][] => {
      const text = defaultInProse(name, setting);
      return text === undefined ? [] : [[`default:${name}`, { text }]];
    }),
  );
}

/**
 * Every fact the documents may state, by name, each read from the code that defines it (see
 * scripts/docs/fragments.ts for the markers). A fact no document states is refused by the spec.
 */
export function facts(root = ROOT): Facts {
  const routes = routesOf(root);
  return {
    settings: { block: true, text: settingsTable(SETTINGS) },
    ...settingDefaults(),
    routes: { block: true, text: routesTable(routes) },
    'routes:webhooks': {
      block: true,
      text: routesTable(routes.filter((route) => route.operation.tags?.includes('webhooks'))),
    },
    'routes-summary': { block: true, text: routesSummary(routes) },
    scopes: { text: listed(SCOPE_NAMES.map(code)) },
    'body-limit': { text: bytes(BODY_LIMIT_BYTES) },
    'body-limit-bytes': { text: String(BODY_LIMIT_BYTES) },
    'rate-limit-window-seconds': { text: String(RATE_LIMIT_WINDOW_MS / 1000) },
    ...retryScheduleFacts(),
  };
}

/**
 * Facts inside code blocks, where no marker can go: every match of the pattern in the file must
 * read, in its group, as the fact; and the pattern must match, so a rewording cannot hide it.
 */
export const QUOTED_IN_CODE: readonly { file: string; pattern: RegExp; fact: string }[] = [
  { file: 'docs/api.md', pattern: /RateLimit-Policy: "default";q=(\d+)/g, fact: 'default:RATE_LIMIT_PER_MINUTE' },
  { file: 'docs/api.md', pattern: /RateLimit-Policy: "default";q=\d+;w=(\d+)/g, fact: 'rate-limit-window-seconds' },
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
