/** The state of one `npm run bench`: the targets, the load generator, tokens and id counters. */
import type { Connection } from 'mysql2/promise';
import type { Counters } from '../lib/db';
import type { Spawned } from '../lib/sys';
import type { TargetName } from '../lib/types';
import type { LoadGenerator } from './load';

/** The service or one of its peers, running. */
export interface Target {
  name: TargetName;
  proc: Spawned;
  url: string;
}

export interface Context {
  conn: Connection;
  /** In the order of TARGETS. */
  targets: Target[];
  loadgen: LoadGenerator;
  tokens: Record<string, string>;
  dbPid: number | null;
  baseline: { selfCost: Counters; idleNoisePerSec: Counters };
  /** Next id to create, per owner. */
  createNext: Map<string, bigint>;
  /** Seeded ids waiting to be deleted, per owner: [next, end). */
  pools: Map<string, { next: bigint; end: bigint }>;
  /** Highest throughput seen per target, to size the delete pools. */
  rpsSeen: Map<TargetName, number>;
  /** Measured runs that started although other processes kept the machine busy. */
  busyStarts: number;
  quietWaitSec: number;
  /** Extra processes of the benchmark (the profiled instance of the service). */
  extraPids: Set<number>;
}
