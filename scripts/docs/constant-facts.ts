import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS as CLIENT_DEFAULTS } from '../../clients/typescript/src/client';
import jestConfig from '../../jest.config';
import { TOKEN_SECRET_BYTES, TOKEN_SECRET_CHARACTERS } from '../../src/auth/token-secret';
import { USER_ID_MAX_LENGTH } from '../../src/auth/auth.limits';
import { LINGER_IDLE_MS, LINGER_MAX_BYTES, LINGER_MAX_MS } from '../../src/common/http/http.limits';
import { rateLimitSettings } from '../../src/config/env/rate-limit';
import { webhooksSettings } from '../../src/config/env/webhooks';
import { PROBE_TIMEOUT_MS } from '../../src/database/database.metrics';
import { LOCK_WAIT_SECONDS } from '../../src/database/migrations/online-ddl';
import { MIGRATION_LOCK_LEASE_SECONDS } from '../../src/database/migrations-runner';
import { startupRetryDelayMs } from '../../src/database/startup-retry';
import { STATEMENT_RETRY_DEFAULTS, backoffBoundMs } from '../../src/database/statement-retry';
import { DATABASE_PING_TIMEOUT_MS } from '../../src/health/health.service';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../../src/idempotency/idempotency.limits';
import { EXIT_MARGIN_MS, LOG_FLUSH_MS } from '../../src/lifecycle/shutdown';
import { LOG_BUFFER_BYTES, LOG_FLUSH_BYTES, LOG_FLUSH_INTERVAL_MS } from '../../src/logging/log-output';
import { REQUEST_ID_MAX_LENGTH } from '../../src/logging/logging.limits';
import {
  RATE_LIMIT_WINDOW_MS,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_RECONNECT_MAX_MS,
  REDIS_RECONNECT_STEP_MS,
} from '../../src/rate-limit/rate-limit.limits';
import { KEY_ID_HEX_DIGITS } from '../../src/secrets/secret-box';
import { RESEAL_BATCH } from '../../src/secrets/secrets.service';
import { TRACE_FLUSH_MS } from '../../src/tracing/tracing';
import { SIGNING_SECRET_BYTES } from '../../src/webhooks/subscriptions/signing-secret';
import { MAX_SUBSCRIPTION_ID } from '../../src/webhooks/subscriptions/subscription-id';
import { attemptLeaseMs } from '../../src/webhooks/deliveries/webhook-attempt';
import { IDLE_CONNECTION_MS } from '../../src/webhooks/deliveries/webhook-sender';
import { ATTEMPT_DURATION_BUCKETS } from '../../src/webhooks/webhooks.metrics';
import { Facts } from './fragments';
import { bytes, code, count, duration, listed, shortDuration } from './readable';
import { scriptCommands } from './references';

const { WEBHOOK_CONCURRENCY, WEBHOOK_TIMEOUT_MS } = webhooksSettings;

/**
 * `a × NAME + b` for a function of one setting that is linear in it, read from the function itself,
 * so the formula the docs write cannot drift from the one the code runs; a function that is no
 * longer linear is refused.
 */
export function linearFormula(f: (value: number) => number, name: string): string {
  const [b, a] = [f(0), f(1) - f(0)];
  const off = [7, 100, 12_345, 3_600_000].find((value) => f(value) !== a * value + b);
  if (off !== undefined) throw new Error(`The formula over ${name} is not a × ${name} + b: write its fact anew`);
  return `${a === 1 ? '' : `${a} × `}${code(name)} + ${duration(b)}`;
}

/**
 * The waits of a retry that doubles up to a cap, as prose: `0.5 s, then 1, 2, 4 and every 5 s`.
 * `delayMs(n)` is the wait after the n-th failure.
 */
export function doublingWaits(delayMs: (attempt: number) => number): string {
  const seconds = (ms: number) => String(ms / 1000);
  const waits: number[] = [];
  for (let attempt = 1; waits.length === 0 || delayMs(attempt) > waits[waits.length - 1]; attempt++) {
    waits.push(delayMs(attempt));
  }
  const cap = waits.pop() as number;
  const [first, ...then] = waits;
  return `${seconds(first)} s, then ${listed([...then.map(seconds), `every ${seconds(cap)} s`])}`;
}

/** The bounds of the backoff before each retry of a statement: `15, 30 and 60 ms`. */
function statementBackoff(): string {
  const retries = Array.from({ length: STATEMENT_RETRY_DEFAULTS.attempts - 1 }, (_, index) => index + 1);
  return `${listed(retries.map((attempt) => String(backoffBoundMs(attempt))))} ms`;
}

const ROOT = join(__dirname, '..', '..');

/** The Node.js versions a package.json's `engines` admits, as prose: `^22.15.0 || ^26.0.0` is `22.15+ or 26`. */
export function nodeLines(range: string): string {
  const lines = range.split('||').map((part) => {
    const match = /^\s*(\^|>=)(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!match) throw new Error(`engines: "${part.trim()}" is not ^x.y.z or >=x.y.z; write its fact anew`);
    const [, operator, major, minor, patch] = match;
    if (operator === '^' && minor === '0' && patch === '0') return major;
    return `${major}.${minor}${patch === '0' ? '' : `.${patch}`}+`;
  });
  return lines.length < 2 ? lines.join('') : `${lines.slice(0, -1).join(', ')} or ${lines[lines.length - 1]}`;
}

/** The `engines.node` of a package.json of the repository. */
export function enginesOf(file: string): string {
  return (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { engines: { node: string } }).engines.node;
}

/** The command of a package.json script of the repository's root. */
export function scriptOf(name: string): string {
  const script = scriptCommands(ROOT)[name];
  if (script === undefined) throw new Error(`package.json has no script ${name}`);
  return script;
}

/** The value of a V8 flag (`--name=value`) in the command of `npm run start:prod`. */
export function startProdFlag(flag: string): string {
  const value = new RegExp(`(?:^| )--${flag}=(\\S+)`).exec(scriptOf('start:prod'))?.[1];
  if (value === undefined) throw new Error(`npm run start:prod has no --${flag}; write its fact anew`);
  return value;
}

/** What names the lingering close, the statement retry, the log's output and the shutdown in a sentence. */
const LINGERING = /lingering|still arriving|without a byte/;
const STATEMENT_RETRY = /statement-retry\.ts|runs them again|[Rr]etries (now )?stop|no attempt starts/;
const STDOUT = /stdout|log reader|log lines/;
const SHUTDOWN = /spans still waiting|buffered log lines/;

/** Deliveries a second one process makes to a receiver that answers in 200 ms, at the default concurrency. */
const deliveriesPerSecondAt200Ms = (concurrency: number): string => count(Math.round(concurrency / 0.2));

/**
 * The facts of the service's constants, and of the formulas it computes over them and over the
 * settings' defaults, each read from where the code defines it (a `*.limits.ts`, or the module whose
 * behaviour it is). scripts/docs/facts.ts holds them with the others.
 */
export function constantFacts(): Facts {
  // Each fact's text, and what names it in a sentence where its value must not be typed.
  const facts: Record<string, [string | number, RegExp?]> = {
    // The request and its connection.
    'linger-max-bytes': [bytes(LINGER_MAX_BYTES), LINGERING],
    'linger-max': [duration(LINGER_MAX_MS), LINGERING],
    'linger-idle': [duration(LINGER_IDLE_MS), LINGERING],
    'request-id-max': [REQUEST_ID_MAX_LENGTH, /request id|X-Request-Id|visible ASCII/i],
    // Tokens, users, keys.
    'token-secret-characters': [TOKEN_SECRET_CHARACTERS, /pst_/],
    'token-secret-bits': [TOKEN_SECRET_BYTES * 8, /pst_/],
    'user-id-max': [USER_ID_MAX_LENGTH, /user id/i],
    'idempotency-key-max': [IDEMPOTENCY_KEY_MAX_LENGTH, /Idempotency-Key|idempotencyKey|The key is/],
    // The rate limit and Redis.
    'rate-limit-window': [duration(RATE_LIMIT_WINDOW_MS), /window|rate limit|Retry-After/i],
    'rate-limit-left-after-one': [(rateLimitSettings.RATE_LIMIT_PER_MINUTE.defaultValue as number) - 1],
    'redis-command-timeout': [duration(REDIS_COMMAND_TIMEOUT_MS), /Redis/],
    'redis-reconnect-step': [duration(REDIS_RECONNECT_STEP_MS), /Redis|client retries/],
    'redis-reconnect-max': [duration(REDIS_RECONNECT_MAX_MS), /Redis|back(ing)?[- ]off/],
    // The database.
    'readiness-database-wait': [duration(DATABASE_PING_TIMEOUT_MS), /readiness|health\/ready/i],
    'database-probe-wait': [duration(PROBE_TIMEOUT_MS), /db_up|SELECT 1/],
    'startup-retry-waits': [doublingWaits(startupRetryDelayMs)],
    'statement-retry-attempts': [STATEMENT_RETRY_DEFAULTS.attempts, STATEMENT_RETRY],
    'statement-retry-backoff': [statementBackoff()],
    'statement-retry-window': [duration(STATEMENT_RETRY_DEFAULTS.windowMs), STATEMENT_RETRY],
    'migration-lock-lease': [duration(MIGRATION_LOCK_LEASE_SECONDS * 1000), /(?=.*\b(lock|holder)\b)(?=.*\blease)/],
    'online-ddl-lock-wait': [duration(LOCK_WAIT_SECONDS * 1000), /metadata lock/],
    // The log, and the shutdown.
    'log-flush-interval': [duration(LOG_FLUSH_INTERVAL_MS), STDOUT],
    'log-flush-bytes': [bytes(LOG_FLUSH_BYTES), STDOUT],
    'log-buffer': [bytes(LOG_BUFFER_BYTES), STDOUT],
    'shutdown-log-flush': [duration(LOG_FLUSH_MS), SHUTDOWN],
    'shutdown-trace-flush': [duration(TRACE_FLUSH_MS), SHUTDOWN],
    'exit-margin': [duration(EXIT_MARGIN_MS), /SHUTDOWN_TIMEOUT_MS/],
    // Webhooks.
    'attempt-lease-formula': [linearFormula((timeoutMs) => attemptLeaseMs({ timeoutMs }), 'WEBHOOK_TIMEOUT_MS')],
    'attempt-lease': [duration(attemptLeaseMs({ timeoutMs: WEBHOOK_TIMEOUT_MS.defaultValue })), /\blease/],
    'connection-idle': [duration(IDLE_CONNECTION_MS), /\bidle\b|keep-alive/],
    'deliveries-per-second-at-200-ms': [
      deliveriesPerSecondAt200Ms(WEBHOOK_CONCURRENCY.defaultValue),
      /WEBHOOK_CONCURRENCY/,
    ],
    'subscription-id-max': [String(MAX_SUBSCRIPTION_ID), /2\^53/],
    'signing-secret-bytes': [SIGNING_SECRET_BYTES, /whsec_/],
    'key-id-hex-digits': [KEY_ID_HEX_DIGITS, /key id/i],
    'reseal-batch': [RESEAL_BATCH, /--batch-size|reseal/],
    'attempt-duration-buckets': [
      `${shortDuration(ATTEMPT_DURATION_BUCKETS[0] * 1000)} to ${shortDuration(ATTEMPT_DURATION_BUCKETS[ATTEMPT_DURATION_BUCKETS.length - 1] * 1000)}`,
    ],
    // The repository: the Node.js lines it runs on, what its tests must cover.
    engines: [enginesOf('package.json')],
    'node-lines': [nodeLines(enginesOf('package.json'))],
    'client-node-lines': [nodeLines(enginesOf('clients/typescript/package.json'))],
    'coverage-lines': [
      `${(jestConfig.coverageThreshold as { global: { lines: number } }).global.lines}%`,
      /coverage|fails below/,
    ],
    // How production starts the service (docs/performance.md, "Warm-up" and "Memory").
    'start-prod': [code(scriptOf('start:prod'))],
    'tier-up-maglev-calls': [startProdFlag('invocation-count-for-maglev'), /maglev/i],
    'tier-up-turbofan-calls': [startProdFlag('invocation-count-for-turbofan'), /turbofan/i],
    // The TypeScript client's options.
    ...Object.fromEntries(
      Object.entries(CLIENT_DEFAULTS).map(([option, value]) => [
        `client-default:${option}`,
        [count(value), new RegExp(`\`${option}\``)] as [string, RegExp],
      ]),
    ),
    'client-attempts': [CLIENT_DEFAULTS.retries + 1, /attempts in all/],
  };
  return Object.fromEntries(
    Object.entries(facts).map(([name, [text, about]]) => [name, { text: String(text), ...(about ? { about } : {}) }]),
  );
}
