import { DURATION_UNIT_MS, parseDuration } from '../duration';
import { SettingValues, duration, flag, integer, parsed } from '../settings';

/** After the Standard Webhooks guidance. */
const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

/** How far a retry's wait may stray from its step of WEBHOOK_RETRY_SCHEDULE, either way, at random. */
export const RETRY_JITTER = 0.1;

/** A comma-separated list of 1 to 20 durations of at most 7 days, each at least 1 ms. */
function parseRetrySchedule(value: string): number[] | undefined {
  const delays = value
    .split(',')
    .map((part) => parseDuration(part, { min: 1, max: 7 * DURATION_UNIT_MS.d, lenient: true }));
  if (delays.length > 20 || delays.some((delay) => delay === undefined)) return undefined;
  return delays as number[];
}

/** One or more comma-separated base64 keys of 32 bytes each. */
export function parseSecretKeys(value: string): Buffer[] | undefined {
  const keys = value.split(',').map((part) => part.trim());
  if (keys.some((key) => !/^[A-Za-z0-9+/_-]{43}=?$/.test(key))) return undefined;
  const decoded = keys.map((key) => Buffer.from(key.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  return decoded.every((key) => key.length === 32) ? decoded : undefined;
}

/** Signed HTTP callbacks to subscribers: docs/webhooks.md. */
export const webhooksSettings = {
  WEBHOOK_SECRET_KEY: parsed(parseSecretKeys, {
    secret: true,
    example: '',
    note: 'the output of `openssl rand -base64 32`, the same on every instance; unset: no webhooks, but for a development key on SQLite (docs/webhooks.md)',
    message:
      '$property must be one or more comma-separated keys of 32 random bytes in base64, such as the output of `openssl rand -base64 32`',
    description:
      'Key that seals the webhook signing secrets: 32 random bytes in base64 (`openssl rand -base64 32`), the same on every instance; a comma-separated list to rotate (the first seals, all open): a new key is added last on every instance before it is put first, then `plantstore secrets reseal`, then the old key is removed ([docs/webhooks.md](webhooks.md#rotating-the-key)). Unset: `/webhooks` answers 503 and the instance delivers nothing, except in development on the embedded database, which makes and keeps a development key beside the database file. Never echoed in an error. See [docs/webhooks.md](webhooks.md#signing-secrets).',
  }),
  WEBHOOK_RETRY_SCHEDULE: parsed(parseRetrySchedule, {
    default: DEFAULT_RETRY_SCHEDULE,
    message: `$property must be 1 to 20 comma-separated durations of at most 7 days, such as ${DEFAULT_RETRY_SCHEDULE} (units ms, s, m, h, d)`,
    description: `Waits before the 2nd, 3rd, ... attempt of an event, each give or take ${RETRY_JITTER * 100}%; after the last, the event is failed. 1 to 20 durations of at most 7 days (units \`ms\`, \`s\`, \`m\`, \`h\`, \`d\`).`,
  }),
  WEBHOOK_DISABLE_AFTER: duration({
    default: '5d',
    message: '$property must be a duration such as 5d, 12h or 30m (units ms, s, m, h, d)',
    description:
      'A subscription whose deliveries have failed this long without a success is disabled (a duration, units as above).',
  }),
  WEBHOOK_TIMEOUT_MS: integer({
    min: 100,
    max: 10_000,
    default: 10_000,
    description:
      "Bound on one delivery attempt's connection and answer, 100 to 10000; resolving the host has the same bound of its own.",
  }),
  WEBHOOK_ALLOW_HTTP: flag({
    default: false,
    description: '`true` accepts `http` webhook URLs. For development and tests.',
  }),
  WEBHOOK_ALLOW_PRIVATE: flag({
    default: false,
    description:
      '`true` accepts webhook URLs that resolve to loopback, private, link-local, metadata and other non-public addresses. For development and tests.',
  }),
  WEBHOOK_POLL_INTERVAL_MS: integer({
    min: 10,
    max: 60_000,
    default: 1000,
    description:
      "How often an instance looks for due deliveries, 10 to 60000: about the delay before an event's first attempt.",
  }),
  WEBHOOK_DELIVERY: flag({
    default: true,
    description:
      '`false`: this instance records events but delivers none, so delivery can run apart from the API in `plantstore worker` processes (see [docs/webhooks.md](webhooks.md#running-it)).',
  }),
  WEBHOOK_CONCURRENCY: integer({
    min: 1,
    max: 1000,
    // Delivery waits on the database and the receiver far more than it computes: attempts at once,
    // not CPU, bound what one process delivers (bench/RESULTS.md, "Webhook deliveries").
    default: 128,
    description:
      'Delivery attempts one instance (or worker) runs at once, 1 to 1000; also the most connections it opens to one receiver at once.',
  }),
  WEBHOOK_SUBSCRIPTION_CONCURRENCY: integer({
    min: 1,
    max: 1000,
    // A quarter of the default WEBHOOK_CONCURRENCY: one endpoint that never answers holds at most
    // that much of an instance, and the rest keeps serving everyone else within a poll.
    default: 32,
    description:
      "Delivery attempts one instance runs at once for one subscription, 1 to 1000 (at most `WEBHOOK_CONCURRENCY`): a slow or failing endpoint, or one with a backlog, holds no more of the instance's slots than this, whatever is due for it (see [docs/webhooks.md](webhooks.md#fair-delivery)).",
  }),
  WEBHOOK_OWNER_CONCURRENCY: integer({
    min: 1,
    max: 1000,
    // Half of the default WEBHOOK_CONCURRENCY: one user's subscriptions together never hold every slot.
    default: 64,
    description:
      'Delivery attempts one instance runs at once for all the subscriptions of one user, 1 to 1000 (at most `WEBHOOK_CONCURRENCY`).',
  }),
};

export function webhooksConfig(env: SettingValues<typeof webhooksSettings>) {
  return {
    /** Keys that seal stored secrets (src/secrets): the first seals, all open (rotation). Empty: webhooks are off. */
    secrets: { keys: env.WEBHOOK_SECRET_KEY ?? [] },
    webhooks: {
      /** Waits before the 2nd, 3rd, ... attempt; after the last the event is marked failed. */
      retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE,
      /** A subscription failing without a success for this long is disabled. */
      disableAfterMs: env.WEBHOOK_DISABLE_AFTER,
      /** One attempt (resolve, connect, response) is cut after this long. */
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      allowHttp: env.WEBHOOK_ALLOW_HTTP,
      allowPrivate: env.WEBHOOK_ALLOW_PRIVATE,
      /** Whether this instance delivers (an API instance beside workers does not). */
      deliver: env.WEBHOOK_DELIVERY,
      pollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS,
      concurrency: env.WEBHOOK_CONCURRENCY,
      /** Attempts in flight on one instance for one subscription, and for one owner's subscriptions. */
      subscriptionConcurrency: env.WEBHOOK_SUBSCRIPTION_CONCURRENCY,
      ownerConcurrency: env.WEBHOOK_OWNER_CONCURRENCY,
    },
  };
}
