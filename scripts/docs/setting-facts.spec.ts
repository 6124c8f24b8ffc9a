import { duration, integer } from '../../src/config/settings';
import { settingFacts } from './setting-facts';

describe(settingFacts.name, () => {
  const facts = settingFacts({
    PORT: integer({ min: 0, max: 65535, default: 3000, description: 'HTTP port.' }),
    WEBHOOK_CONCURRENCY: integer({ min: 1, max: 1000, default: 128, description: 'Attempts at once.' }),
    WEBHOOK_TIMEOUT_MS: integer({ min: 100, max: 10_000, default: 10_000, description: 'Bound.' }),
    DB_STARTUP_TIMEOUT: duration({ min: 0, max: 3_600_000, default: '60s', message: 'm', description: 'Wait.' }),
    PLANTS_DEFAULT_PAGE: integer({ min: 1, max: 10_000, defaultText: '`PLANTS_MAX_PAGE`', description: 'Page.' }),
  });
  const texts = Object.fromEntries(Object.entries(facts).map(([name, fact]) => [name, fact.text]));

  it("states each setting's default, least and most: a duration in words, a default as written, a bound as a count", () => {
    expect(texts).toEqual({
      'default:PORT': '3000',
      'min:PORT': '0',
      'max:PORT': '65,535',
      'default:WEBHOOK_CONCURRENCY': '128',
      'min:WEBHOOK_CONCURRENCY': '1',
      'max:WEBHOOK_CONCURRENCY': '1,000',
      'default:WEBHOOK_TIMEOUT_MS': '10 seconds',
      'min:WEBHOOK_TIMEOUT_MS': '100 ms',
      'max:WEBHOOK_TIMEOUT_MS': '10 seconds',
      'default:DB_STARTUP_TIMEOUT': '1 minute',
      'min:DB_STARTUP_TIMEOUT': '0 ms',
      'max:DB_STARTUP_TIMEOUT': '1 hour',
      'min:PLANTS_DEFAULT_PAGE': '1',
      'max:PLANTS_DEFAULT_PAGE': '10,000',
    });
  });

  it('knows a sentence names a setting by its name alone, wherever it is written', () => {
    const { about } = facts['max:WEBHOOK_CONCURRENCY'];
    expect(
      ['raise `WEBHOOK_CONCURRENCY`', 'at most WEBHOOK_CONCURRENCY.', 'WEBHOOK_CONCURRENCY=64'].map((s) =>
        about?.test(s),
      ),
    ).toEqual([true, true, true]);
    expect(about?.test('WEBHOOK_CONCURRENCY_MAX')).toBe(false);
    expect(about?.test('WEBHOOK_SUBSCRIPTION_CONCURRENCY')).toBe(false);
  });
});
