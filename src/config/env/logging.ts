import { SettingValues, oneOf } from '../settings';
import { serverSettings } from './server';

/** The service log: one JSON object per line, or readable lines in development. */
export const loggingSettings = {
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'Least severe level logged: `fatal`, `error`, `warn`, `info`, `debug`, `trace`, or `silent` for none.',
  }),
  LOG_FORMAT: oneOf(['json', 'pretty'], {
    defaultText: '`pretty` in development, else `json`',
    example: 'json',
    description:
      '`json` (one object per line) or `pretty` (human-readable lines; `json` where the dev dependencies are not installed, as in the container image).',
  }),
};

export function loggingConfig(
  env: SettingValues<typeof loggingSettings> & Pick<SettingValues<typeof serverSettings>, 'NODE_ENV'>,
) {
  const format = env.LOG_FORMAT ?? (env.NODE_ENV === 'development' ? 'pretty' : 'json');
  return { log: { level: env.LOG_LEVEL, pretty: format === 'pretty' } };
}
