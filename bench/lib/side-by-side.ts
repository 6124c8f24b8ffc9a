/**
 * How every benchmark compares things side by side (the service and its peers, builds, settings,
 * tokens, owners): each side is measured under each workload in rounds, one side at a time in an
 * order reversed every other round (or all at once), and a figure is then taken as a ratio to the
 * reference side within its round. A two-core machine swings by a fifth between rounds; within one
 * round the sides share it.
 */

export interface Side<W extends string, M> {
  name: string;
  /** Load before the first round, measured by nobody. */
  warm?(workload: W): Promise<void>;
  /** One measured run; `round` counts from 0. */
  measure(workload: W, round: number): Promise<M>;
}

export interface SideBySide<W extends string, M> {
  /** The first is the reference of the ratios. */
  sides: Side<W, M>[];
  /** Each round measures every side under each of them, in this order. */
  workloads: readonly W[];
  rounds: number;
  /** All sides loaded at once, instead of one at a time in alternating order. */
  together?: boolean;
  /** Before a round's first run, e.g. to start fresh instances or seed what it will delete. */
  beforeRound?(round: number): Promise<void>;
  /** After a round, also when it failed. */
  afterRound?(round: number): Promise<void>;
  /** Before each run (before each set of runs, together), e.g. to let the machine settle. */
  beforeRun?(): Promise<void>;
  onRound?(round: number, measured: Round<W, M>): void;
}

/** Whether the bench was asked to load its sides at once (BENCH_TOGETHER=1) rather than one at a time. */
export function togetherRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.BENCH_TOGETHER === '1';
}

/** The connections each side's load opens: all of them one at a time; loaded together, a share each. */
export function connectionsPerSide(connections: number, sides: number, together: boolean): number {
  return together ? Math.max(1, Math.round(connections / sides)) : connections;
}

/** Per workload, the figures of each side, in the order of `sides`. */
export type Round<W extends string, M> = Record<W, M[]>;

/** The indexes of `count` sides in the order they run in `round`: as given, reversed every other round. */
export function orderOf(count: number, round: number): number[] {
  const order = [...Array(count).keys()];
  return round % 2 === 0 ? order : order.reverse();
}

export async function runSideBySide<W extends string, M>(plan: SideBySide<W, M>): Promise<Round<W, M>[]> {
  for (const workload of plan.workloads) for (const side of plan.sides) await side.warm?.(workload);
  const rounds: Round<W, M>[] = [];
  for (let round = 0; round < plan.rounds; round++) {
    try {
      await plan.beforeRound?.(round);
      const measured = {} as Round<W, M>;
      for (const workload of plan.workloads) measured[workload] = await measureRound(plan, workload, round);
      rounds.push(measured);
      plan.onRound?.(round, measured);
    } finally {
      await plan.afterRound?.(round);
    }
  }
  return rounds;
}

async function measureRound<W extends string, M>(plan: SideBySide<W, M>, workload: W, round: number): Promise<M[]> {
  if (plan.together) {
    await plan.beforeRun?.();
    return Promise.all(plan.sides.map((side) => side.measure(workload, round)));
  }
  const measured: M[] = [];
  for (const i of orderOf(plan.sides.length, round)) {
    await plan.beforeRun?.();
    measured[i] = await plan.sides[i].measure(workload, round);
  }
  return measured;
}

/** Per round, a side's figure ÷ the reference side's (the first unless given). */
export function ratioPerRound<M>(runs: M[][], side: number, pick: (m: M) => number, reference = 0): number[] {
  return runs.map((run) => pick(run[side]) / pick(run[reference]));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `[min–max]` of ratios, three decimals. */
export const range = (values: number[]) => `[${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}]`;

/** `median [min–max]` of ratios, three decimals; `bold` marks the median as the headline figure. */
export function ratioSummary(values: number[], bold = false): string {
  const mid = median(values).toFixed(3);
  return `${bold ? `**${mid}**` : mid} ${range(values)}`;
}
