import { SettingValues, integer } from '../settings';

/** The Prometheus listener, apart from the API. */
export const metricsSettings = {
  METRICS_PORT: integer({
    min: 0,
    max: 65535,
    default: 9464,
    description:
      'Port of a separate listener, on `HOST`, serving Prometheus metrics on `GET /metrics` (never on the API port); `0` picks a free port.',
  }),
};

export function metricsConfig(env: SettingValues<typeof metricsSettings>) {
  return { metrics: { port: env.METRICS_PORT } };
}
