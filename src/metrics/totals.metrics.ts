import { Counter, Registry } from 'prom-client';

/**
 * A counter of a total that its feature keeps as a plain number (a field it adds to), read when
 * Prometheus scrapes: counting costs the feature one addition and nothing of prom-client's.
 */
export function totalReadAtScrape(registry: Registry, name: string, help: string, total: () => number): Counter {
  let counted = 0;
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = total();
      this.inc(now - counted);
      counted = now;
    },
  });
}
