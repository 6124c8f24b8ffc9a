import { SettingValues, integer } from '../settings';

/** The plant list's pages. */
export const plantsSettings = {
  PLANTS_MAX_PAGE: integer({
    min: 1,
    max: 10_000,
    default: 1000,
    description: 'Most plants in one list page, whatever `limit` asks.',
  }),
  PLANTS_DEFAULT_PAGE: integer({
    min: 1,
    max: 10_000,
    defaultText: '`PLANTS_MAX_PAGE`',
    example: '100',
    description: 'Plants in one list page when the request gives no `limit` (at most `PLANTS_MAX_PAGE`).',
  }),
};

export function plantsConfig(env: SettingValues<typeof plantsSettings>) {
  return { plants: { maxPage: env.PLANTS_MAX_PAGE, defaultPage: env.PLANTS_DEFAULT_PAGE ?? env.PLANTS_MAX_PAGE } };
}
