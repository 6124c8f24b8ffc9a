import { Gauge, Registry } from 'prom-client';
import { perScrape } from './per-scrape';

describe(perScrape.name, () => {
  it('gives the gauges of one scrape one read, and the next scrape a new one', async () => {
    const registry = new Registry();
    let reads = 0;
    const read = perScrape(async () => ({ a: 1, b: 2, n: ++reads }));
    for (const key of ['a', 'b'] as const) {
      new Gauge({
        name: `shared_${key}`,
        help: key,
        registers: [registry],
        async collect() {
          this.set((await read())[key]);
        },
      });
    }
    await registry.metrics();
    expect(reads).toBe(1);
    await registry.metrics();
    expect(reads).toBe(2);
  });

  it('forgets a failed read, so the next scrape tries again', async () => {
    const read = jest.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue('up');
    const shared = perScrape(read);
    await expect(shared()).rejects.toThrow('down');
    await expect(shared()).resolves.toBe('up');
    expect(read).toHaveBeenCalledTimes(2);
  });
});
