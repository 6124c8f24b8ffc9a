/** How the docs write numbers, sizes and durations. */

const LONG_UNITS = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
] as const;

const SHORT_UNITS = [
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
] as const;

/** 1000 → `1,000`: digits grouped as the docs' prose writes counts. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** 16384 → `16 KiB`; a size that is not a whole number of KiB stays in bytes. */
export function bytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  return n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

/**
 * 5000 → `5 seconds`, 432_000_000 → `5 days`: a duration in prose, in its largest whole unit; but a
 * day is `24 hours`, as people say it.
 */
export function duration(ms: number): string {
  const unit = LONG_UNITS.find(([name, size]) => ms >= size * (name === 'day' ? 2 : 1) && ms % size === 0);
  if (!unit) return `${ms} ms`;
  const n = ms / unit[1];
  return `${n} ${unit[0]}${n === 1 ? '' : 's'}`;
}

/** 5000 → `5 s`, 300_000 → `5 min`: a duration in a table, in its largest whole unit. */
export function shortDuration(ms: number): string {
  const unit = SHORT_UNITS.find(([, size]) => ms >= size && ms % size === 0);
  return unit ? `${ms / unit[1]} ${unit[0]}` : `${ms} ms`;
}

/**
 * About how long: 9_305_000 → `2 h 35 min`. Past a minute the seconds are dropped (rounded), and
 * hours and minutes are written together.
 */
export function aboutDuration(ms: number): string {
  if (ms < 60_000) return shortDuration(Math.round(ms / 1000) * 1000 || ms);
  const minutes = Math.round(ms / 60_000);
  const [h, min] = [Math.floor(minutes / 60), minutes % 60];
  return [h > 0 ? `${h} h` : '', min > 0 ? `${min} min` : ''].filter(Boolean).join(' ');
}

/** 99_305_000 → `27½ hours`: a long span to the half hour, a short one to the minute. */
export function aboutHours(ms: number): string {
  if (ms < 2 * 3_600_000) return duration(Math.max(60_000, Math.round(ms / 60_000) * 60_000));
  const halves = Math.round(ms / 1_800_000);
  return `${Math.floor(halves / 2)}${halves % 2 === 1 ? '½' : ''} hours`;
}

/** 1 → `1st`, 11 → `11th`, 22 → `22nd`. */
export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** `a`, `a and b`, `a, b and c`. */
export function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export const code = (text: string | number): string => `\`${text}\``;
