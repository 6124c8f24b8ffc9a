export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

export const DURATION_UNIT_MS: Readonly<Record<DurationUnit, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

export interface DurationRules {
  /** The units accepted; all of them unless given. */
  units?: readonly DurationUnit[];
  /** Inclusive bounds, in milliseconds. */
  min?: number;
  max?: number;
  /**
   * Read as a hand-edited setting is, like the integer settings: surrounding spaces and leading zeros
   * are accepted. Without it the text must be exact, as on a command line.
   */
  lenient?: boolean;
}

const LENIENT = /^(\d{1,9})(ms|s|m|h|d)$/;
const EXACT = /^(0|[1-9]\d{0,8})(ms|s|m|h|d)$/;

/** `250ms`, `5s`, `30m`, `2h`, `5d` in milliseconds; undefined when the text is not such a duration within the rules. */
export function parseDuration(text: string, rules: DurationRules = {}): number | undefined {
  const { units, min = 0, max = Infinity, lenient = false } = rules;
  const match = lenient ? LENIENT.exec(text.trim()) : EXACT.exec(text);
  const unit = match?.[2] as DurationUnit | undefined;
  if (!match || !unit || (units && !units.includes(unit))) return undefined;
  const ms = Number(match[1]) * DURATION_UNIT_MS[unit];
  return ms >= min && ms <= max ? ms : undefined;
}
