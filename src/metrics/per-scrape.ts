/**
 * A read that several gauges of one scrape share: Prometheus collects every metric of a scrape at
 * once, so the gauges called while a read is pending get that read, and the next scrape reads again.
 */
export function perScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    if (!pending) {
      const current = read();
      pending = current;
      const forget = () => {
        if (pending === current) pending = undefined;
      };
      current.then(forget, forget);
    }
    return pending;
  };
}
