/** Reading the BENCH_* settings: one parser for durations and one for counts, failing on a typo. */

/** Seconds from `10s`, `500ms`, `1m` or a bare number of seconds; `fallback` when unset or empty. */
export function seconds(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new Error(`not a duration: "${text}" (e.g. 10s, 500ms, 1m)`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
}

export function integer(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a whole number: "${text}"`);
  return n;
}
