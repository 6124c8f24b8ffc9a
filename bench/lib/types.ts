import type { LoadResult } from '../loadgen';
import type { CausalProbe } from './cluster';
import type { FaultRound } from './faults';
import type { SchemaChangeRound } from './schema-change';
import type { Counter, Counters, ExplainResult } from './db';
import type { ProfileSummary } from './profile';

/** The service and its peers, from the most middleware to none: the order of a round's runs. */
export const TARGETS = ['service', 'expressprod', 'express', 'nodehttp'] as const;
export type TargetName = (typeof TARGETS)[number];

export const TARGET_LABEL: Record<TargetName, string> = {
  service: 'service (NestJS)',
  expressprod: 'Express peer, production middleware',
  express: 'Express peer',
  nodehttp: 'node:http floor',
};

export interface RoundResult {
  round: number;
  target: TargetName;
  load: LoadResult;
  /** Status-counter deltas over the round, the counters' own cost taken off. */
  sql: Counters;
  /** sql divided by the requests sent. */
  sqlPerRequest: Record<Counter, number>;
  rssMaxMb: number;
  /** CPU time over wall time, as a share of one core. */
  cpu: {
    target: number;
    /** CPU seconds the target used over the run, all its threads (absent in results from before). */
    targetSec?: number;
    db: number | null;
    /** CPU seconds the database server used over the run (absent in results from before, or with no server of ours). */
    dbSec?: number | null;
    loadgen: number;
    /** Processes outside the benchmark, in cores. */ others: number;
  };
}

export interface ScenarioResult {
  name: string;
  title: string;
  description: string;
  connections: number;
  rounds: RoundResult[];
}

export interface ScaleResult {
  label: string;
  rowsInTable: number;
  users: number;
  /** Closed loop with the usual connections. */
  loaded: RoundResult[];
  /** One connection: the latency of one request at a time. */
  single: RoundResult[];
}

/** One measured run of the cluster scenario. */
export interface ClusterRound {
  round: number;
  workload: 'list' | 'create';
  /** `single`: one instance on the single server; `cluster`: two instances on two Galera nodes. */
  setup: 'single' | 'cluster';
  load: LoadResult;
  /** CPU time over wall time, as a share of one core: the instances, the database server(s), others. */
  cpu: { instances: number; db: number | null; others: number };
}

export interface ClusterResult {
  description: string;
  startSec: number;
  connections: number;
  rounds: ClusterRound[];
  causal: CausalProbe[];
  /** Writes through HAProxy while the writer node crashes or is partitioned away (absent in results from before). */
  faults?: FaultRound[];
  /** Writes through HAProxy while `plants` changes (absent in results from before). */
  schemaChanges?: SchemaChangeRound[];
}

export interface TraceEntry {
  target: TargetName;
  request: string;
  statements: string[];
}

export interface ParityCheck {
  request: string;
  target: TargetName;
  same: boolean;
  detail: string;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  mode: 'quick' | 'full';
  machine: Record<string, string>;
  settings: Record<string, string>;
  notes: string[];
  counterBaseline: { selfCost: Counters; idleNoisePerSec: Counters; idleNoiseAfter?: Counters };
  parity: ParityCheck[];
  trace: TraceEntry[] | null;
  scenarios: ScenarioResult[];
  scale: ScaleResult[];
  cluster: ClusterResult | null;
  explain: { label: string; result: ExplainResult }[];
  profiles: { scenario: string; summary: ProfileSummary }[];
  serviceIdleRssMb: number | null;
  serviceHwmMb: number | null;
}
