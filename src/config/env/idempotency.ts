import { DURATION_UNIT_MS } from '../duration';
import { SettingValues, duration } from '../settings';

/** Requests sent with an Idempotency-Key. */
export const idempotencySettings = {
  IDEMPOTENCY_TTL: duration({
    min: 1000,
    max: 30 * DURATION_UNIT_MS.d,
    default: '24h',
    message: '$property must be a duration from 1s to 30d, such as 24h, 90m or 7d (units ms, s, m, h, d)',
    description:
      'How long the answer to a `POST` with an `Idempotency-Key` is kept for its repeats, 1s to 30d (a duration, units as above).',
  }),
};

export function idempotencyConfig(env: SettingValues<typeof idempotencySettings>) {
  return { idempotency: { ttlMs: env.IDEMPOTENCY_TTL } };
}
