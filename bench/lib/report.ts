/** Turns the benchmark's results into bench/RESULTS.md and the bar chart bench/results.svg. */
import type { Counter } from './db';
import type { FaultRound } from './faults';
import type { SchemaChangeRound, SchemaChangeWay } from './schema-change';
import { BenchResults, ClusterResult, RoundResult, ScenarioResult, TARGETS, TARGET_LABEL, TargetName } from './types';

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(values: number[]): Spread {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const mid = Math.floor(v.length / 2);
  const median = v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1], n: v.length };
}

const roundsOf = (rounds: RoundResult[], target: TargetName) => rounds.filter((r) => r.target === target);

/** Per-round ratios service/peer of a figure, pairing rounds by number. */
export function ratios(rounds: RoundResult[], peer: TargetName, pick: (r: RoundResult) => number): Spread {
  const service = new Map(roundsOf(rounds, 'service').map((r) => [r.round, pick(r)]));
  return spread(roundsOf(rounds, peer).map((r) => (service.get(r.round) ?? NaN) / pick(r)));
}

/** Statements per request: the median of the rounds (one round disturbed by another client cannot decide it). */
export function sqlPerRequestMedian(rounds: RoundResult[], target: TargetName, counter: Counter): number {
  return spread(roundsOf(rounds, target).map((r) => r.sqlPerRequest[counter])).median;
}

/** Rounds whose statements per request stray from the target's median: another client's statements, most likely. */
export function sqlOutliers(rounds: RoundResult[]): string[] {
  const out: string[] = [];
  for (const t of TARGETS) {
    const median = sqlPerRequestMedian(rounds, t, 'Questions');
    for (const r of roundsOf(rounds, t)) {
      if (Math.abs(r.sqlPerRequest.Questions - median) > 0.01) {
        const counts = (['Com_select', 'Com_insert', 'Com_delete', 'Com_update'] as const)
          .map((c) => `${c} ${r.sql[c]}`)
          .join(', ');
        out.push(
          `round ${r.round}, ${TARGET_LABEL[t]}: ${r.sqlPerRequest.Questions.toFixed(3)} statements/request (${num(r.sql.Questions)} questions for ${num(r.load.sent)} requests: ${counts}), other processes at ${num(r.cpu.others * 100)}% of a core`,
        );
      }
    }
  }
  return out;
}

/** Statements per request over all rounds of a target: summed deltas over summed requests. */
export function sqlPerRequest(rounds: RoundResult[], target: TargetName, counter: Counter): number {
  const mine = roundsOf(rounds, target);
  const sent = mine.reduce((s, r) => s + r.load.sent, 0);
  return mine.reduce((s, r) => s + r.sql[counter], 0) / Math.max(1, sent);
}

const rps = (r: RoundResult) => r.load.rps;
const p50 = (r: RoundResult) => r.load.latencyMs.p50;
const p99 = (r: RoundResult) => r.load.latencyMs.p99;
/** The slowest request answered in the run. */
const slowest = (r: RoundResult) => r.load.latencyMs.max;
/** The target's CPU time over the responses it gave, in microseconds (NaN for results from before it was recorded). */
export const cpuPerResponseUs = (r: RoundResult) => ((r.cpu.targetSec ?? NaN) * 1e6) / r.load.responses;
/**
 * The database server's CPU per response: what a request costs the part that is hardest to scale
 * (on Galera every node applies every write). The server is the bench's own, serving this target
 * alone during the round.
 */
export const dbCpuPerResponseUs = (r: RoundResult) => ((r.cpu.dbSec ?? NaN) * 1e6) / r.load.responses;

const num = (x: number, digits = 0) =>
  Number.isFinite(x)
    ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const ms = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) : 'n/a');
const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : 'n/a');

function fmtSpread(s: Spread, f: (x: number) => string): string {
  return s.n <= 1 ? f(s.median) : `${f(s.median)} [${f(s.min)}–${f(s.max)}]`;
}

function statusSummary(rounds: RoundResult[]): string {
  const total: Record<string, number> = {};
  let errors = 0;
  for (const r of rounds) {
    for (const [code, count] of Object.entries(r.load.status)) total[code] = (total[code] ?? 0) + count;
    errors += r.load.errors;
  }
  const codes = Object.entries(total)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, count]) => `${code}: ${num(count)}`)
    .join(', ');
  return errors > 0 ? `${codes}; socket errors: ${num(errors)}` : codes || 'none';
}

export interface TargetVerdict {
  target: string;
  figure: string;
  pass: boolean | null;
  /** A reach goal: reported as reached or not, never as PASS or FAIL. */
  goal?: boolean;
}

/**
 * The service's targets against its peers, on each of PEER_TARGET_SCENARIOS, as per-round ratios
 * (service ÷ peer, the median of the rounds). Every figure is written here once: RESULTS.md prints
 * it with what was measured, and bench/README.md names these constants.
 */
export const PEER_TARGETS = {
  /** Against the Express peer with production middleware: at least its throughput, at most its p99. */
  production: { peer: 'expressprod', throughputAtLeast: 1.0, p99AtMost: 1.0 },
  /** Against the bare Express peer: a throughput floor, a reach goal above it, and CPU per request. */
  plain: { peer: 'express', throughputAtLeast: 0.85, throughputReachGoal: 1.0, cpuPerRequestAtMost: 1.2 },
} as const;
export const PEER_TARGET_SCENARIOS = ['list', 'create'];

/** The service's own targets: statements per request, the list at scale, resident memory. */
export const SERVICE_TARGETS = {
  /** Steady-state statements per list, create and delete, within this tolerance of the counters. */
  sqlPerRequest: 1,
  sqlTolerance: 0.01,
  sqlScenarios: ['list', 'create', 'delete'],
  /** List latency with the large table ÷ with the small one, at most. */
  scaleLatencyAtMost: 1.2,
  /** Largest VmRSS under load, below. */
  rssBelowMb: 200,
} as const;

function scenario(results: BenchResults, name: string): ScenarioResult | undefined {
  return results.scenarios.find((s) => s.name === name);
}

/** The list's latency on the large table against the small one. */
function scaleVerdicts(results: BenchResults): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  const small = results.scale[0];
  const big = results.scale[results.scale.length - 1];
  if (!small || !big || small === big) return out;
  const within = `within ${ratio(SERVICE_TARGETS.scaleLatencyAtMost)} of ${num(small.rowsInTable)} rows`;
  for (const [label, pick] of [
    ['p50', p50],
    ['p99', p99],
  ] as const) {
    const a = spread(roundsOf(small.loaded, 'service').map(pick)).median;
    const b = spread(roundsOf(big.loaded, 'service').map(pick)).median;
    out.push({
      target: `list ${label} with ${num(big.rowsInTable)} rows ${within} (service, ${results.scenarios[0]?.connections ?? ''} connections)`,
      figure: `${ms(b)} ms vs ${ms(a)} ms = ${ratio(b / a)}`,
      pass: b / a <= SERVICE_TARGETS.scaleLatencyAtMost,
    });
  }
  const a1 = spread(roundsOf(small.single, 'service').map(p50)).median;
  const b1 = spread(roundsOf(big.single, 'service').map(p50)).median;
  if (Number.isFinite(a1) && Number.isFinite(b1)) {
    out.push({
      target: `list p50 with ${num(big.rowsInTable)} rows ${within} (service, 1 connection)`,
      figure: `${ms(b1)} ms vs ${ms(a1)} ms = ${ratio(b1 / a1)}`,
      pass: b1 / a1 <= SERVICE_TARGETS.scaleLatencyAtMost,
    });
  }
  return out;
}

const perRound = (s: Spread) => `${ratio(s.median)} (rounds ${ratio(s.min)}–${ratio(s.max)})`;

/** The targets against the production-middleware peer on one scenario; none if it did not run. */
function productionPeerVerdicts(name: string, rounds: RoundResult[]): TargetVerdict[] {
  const { peer, throughputAtLeast, p99AtMost } = PEER_TARGETS.production;
  if (roundsOf(rounds, peer).length === 0) return [];
  const throughput = ratios(rounds, peer, rps);
  const latency = ratios(rounds, peer, p99);
  return [
    {
      target: `${name}: throughput at least ${ratio(throughputAtLeast)} that of the ${TARGET_LABEL[peer]}`,
      figure: perRound(throughput),
      pass: throughput.median >= throughputAtLeast,
    },
    {
      target: `${name}: p99 at most ${ratio(p99AtMost)} that of the ${TARGET_LABEL[peer]}`,
      figure: perRound(latency),
      pass: latency.median <= p99AtMost,
    },
  ];
}

/** The targets against the bare Express peer on one scenario: throughput (floor and reach goal), CPU per request. */
function plainPeerVerdicts(name: string, rounds: RoundResult[]): TargetVerdict[] {
  const { peer, throughputAtLeast, throughputReachGoal, cpuPerRequestAtMost } = PEER_TARGETS.plain;
  const throughput = ratios(rounds, peer, rps);
  const cpu = ratios(rounds, peer, cpuPerResponseUs);
  const cpuOf = (t: TargetName) => num(spread(roundsOf(rounds, t).map(cpuPerResponseUs)).median);
  return [
    {
      target: `${name}: throughput at least ${ratio(throughputAtLeast)} that of the ${TARGET_LABEL[peer]}`,
      figure: perRound(throughput),
      pass: throughput.median >= throughputAtLeast,
    },
    {
      target: `${name}: throughput at least ${ratio(throughputReachGoal)} that of the ${TARGET_LABEL[peer]} (reach goal)`,
      figure: perRound(throughput),
      pass: throughput.median >= throughputReachGoal,
      goal: true,
    },
    // Results from before the CPU time of a run was recorded have no CPU per request.
    ...(Number.isFinite(cpu.median)
      ? [
          {
            target: `${name}: service CPU per request at most ${ratio(cpuPerRequestAtMost)} that of the ${TARGET_LABEL[peer]}`,
            figure: `${perRound(cpu)}; medians ${cpuOf('service')} µs vs ${cpuOf(peer)} µs`,
            pass: cpu.median <= cpuPerRequestAtMost,
          },
        ]
      : []),
  ];
}

/** Exactly one statement per request in steady state, per scenario that ran. */
function sqlVerdicts(results: BenchResults): TargetVerdict[] {
  const { sqlPerRequest: one, sqlTolerance, sqlScenarios } = SERVICE_TARGETS;
  return sqlScenarios.flatMap((name) => {
    const s = scenario(results, name);
    if (!s) return [];
    const q = sqlPerRequestMedian(s.rounds, 'service', 'Questions');
    const pooled = sqlPerRequest(s.rounds, 'service', 'Questions');
    return [
      {
        target: `${name}: exactly ${one} SQL statement per request (steady state)`,
        figure: `${q.toFixed(3)} statements/request (Questions, median of rounds; pooled over all rounds ${pooled.toFixed(3)})`,
        pass: Math.abs(q - one) <= sqlTolerance,
      },
    ];
  });
}

/** The service's list statements at scale: a range on the primary key, no filesort. */
function explainVerdicts(results: BenchResults): TargetVerdict[] {
  const plans = results.explain.filter((e) => e.label.startsWith('service'));
  if (plans.length === 0) return [];
  const ok = plans.every((e) =>
    e.result.rows.every((row) => String(row.key) === 'PRIMARY' && !/filesort/i.test(String(row.Extra ?? ''))),
  );
  const ranged = plans.some((e) => e.result.rows.some((row) => String(row.type) === 'range'));
  return [
    {
      target: 'EXPLAIN of the list query at scale: index range, no filesort',
      figure: plans
        .map((e) =>
          e.result.rows.map((r) => `${e.label}: type=${r.type}, key=${r.key}, Extra=${r.Extra ?? ''}`).join('; '),
        )
        .join(' | '),
      pass: ok && ranged,
    },
  ];
}

function memoryVerdicts(results: BenchResults): TargetVerdict[] {
  const rssValues = results.scenarios.flatMap((s) => roundsOf(s.rounds, 'service').map((r) => r.rssMaxMb));
  if (rssValues.length === 0) return [];
  const max = Math.max(...rssValues);
  return [
    {
      target: `service resident memory under load below ${SERVICE_TARGETS.rssBelowMb} MB`,
      figure: `max VmRSS ${num(max, 1)} MB`,
      pass: max < SERVICE_TARGETS.rssBelowMb,
    },
  ];
}

export function evaluateTargets(results: BenchResults): TargetVerdict[] {
  const peers = PEER_TARGET_SCENARIOS.flatMap((name) => {
    const s = scenario(results, name);
    return s ? [...productionPeerVerdicts(name, s.rounds), ...plainPeerVerdicts(name, s.rounds)] : [];
  });
  return [
    ...peers,
    ...sqlVerdicts(results),
    ...scaleVerdicts(results),
    ...explainVerdicts(results),
    ...memoryVerdicts(results),
  ];
}

function scenarioTable(rounds: RoundResult[]): string[] {
  const lines: string[] = [];
  lines.push(
    `| | ${TARGETS.map((t) => TARGET_LABEL[t]).join(' | ')} |`,
    `|---|${TARGETS.map(() => '---:').join('|')}|`,
  );
  const row = (label: string, f: (rs: RoundResult[]) => string) =>
    lines.push(`| ${label} | ${TARGETS.map((t) => f(roundsOf(rounds, t))).join(' | ')} |`);
  row('req/s, median [min–max]', (rs) => fmtSpread(spread(rs.map(rps)), (x) => num(x)));
  // A new instance's first minutes: the first round after the warm-up, against the rounds' median.
  row('first round req/s ÷ the median', (rs) => {
    const first = rs.reduce<RoundResult | undefined>(
      (a, r) => (a === undefined || r.round < a.round ? r : a),
      undefined,
    );
    return first === undefined ? '' : ratio(rps(first) / spread(rs.map(rps)).median);
  });
  row('p50 ms', (rs) => fmtSpread(spread(rs.map(p50)), ms));
  row('p99 ms', (rs) => fmtSpread(spread(rs.map(p99)), ms));
  row('slowest request ms', (rs) => fmtSpread(spread(rs.map(slowest)), ms));
  row('SQL statements / request (Questions), median of rounds (pooled)', (rs) =>
    rs.length
      ? `${sqlPerRequestMedian(rs, rs[0].target, 'Questions').toFixed(3)} (${sqlPerRequest(rs, rs[0].target, 'Questions').toFixed(3)})`
      : '',
  );
  row('Com_select / insert / delete / update / begin per request, median', (rs) =>
    rs.length
      ? (['Com_select', 'Com_insert', 'Com_delete', 'Com_update', 'Com_begin'] as const)
          .map((c) => sqlPerRequestMedian(rs, rs[0].target, c).toFixed(3))
          .join(' / ')
      : '',
  );
  row('max RSS under load, MB', (rs) => num(Math.max(...rs.map((r) => r.rssMaxMb)), 1));
  row('CPU per request, µs (CPU time ÷ responses)', (rs) => fmtSpread(spread(rs.map(cpuPerResponseUs)), (x) => num(x)));
  row('database CPU per request, µs (its CPU time ÷ responses)', (rs) =>
    fmtSpread(spread(rs.map(dbCpuPerResponseUs)), (x) => num(x)),
  );
  row('CPU of its core, median', (rs) => `${num(spread(rs.map((r) => r.cpu.target * 100)).median)}%`);
  row(
    'core 1: database + load generator CPU, median',
    (rs) =>
      `${num(spread(rs.map((r) => (r.cpu.db ?? NaN) * 100)).median)}% + ${num(spread(rs.map((r) => r.cpu.loadgen * 100)).median)}%`,
  );
  row(
    'other processes on the machine, CPU median (max)',
    (rs) =>
      `${num(spread(rs.map((r) => r.cpu.others * 100)).median)}% (${num(Math.max(...rs.map((r) => r.cpu.others * 100)))}%)`,
  );
  row('responses by status', (rs) => statusSummary(rs));
  return lines;
}

const PEERS = TARGETS.filter((t) => t !== 'service');

function ratioTable(rounds: RoundResult[]): string[] {
  const lines = [
    `| service ÷ peer, per-round ratios: median [min–max] | ${PEERS.map((t) => `vs ${TARGET_LABEL[t]}`).join(' | ')} |`,
    `|---|${PEERS.map(() => '---:').join('|')}|`,
  ];
  for (const [label, pick] of [
    ['throughput (higher is better)', rps],
    ['p50 latency (lower is better)', p50],
    ['p99 latency (lower is better)', p99],
    ['CPU per request (lower is better)', cpuPerResponseUs],
    ['database CPU per request (lower is better)', dbCpuPerResponseUs],
  ] as const) {
    lines.push(`| ${label} | ${PEERS.map((t) => fmtSpread(ratios(rounds, t, pick), ratio)).join(' | ')} |`);
  }
  return lines;
}

function roundsDetail(rounds: RoundResult[]): string[] {
  const lines = [
    '<details><summary>Every round</summary>',
    '',
    "| round | target | req/s | p50 ms | p90 ms | p99 ms | max ms | sent | SQL/req | RSS MB | CPU | CPU µs/req | DB CPU µs/req | others' CPU | statuses |",
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rounds) {
    const l = r.load.latencyMs;
    lines.push(
      `| ${r.round} | ${TARGET_LABEL[r.target]} | ${num(r.load.rps)} | ${ms(l.p50)} | ${ms(l.p90)} | ${ms(l.p99)} | ${ms(l.max)} | ${num(r.load.sent)} | ${r.sqlPerRequest.Questions.toFixed(3)} | ${num(r.rssMaxMb, 1)} | ${num(r.cpu.target * 100)}% | ${num(cpuPerResponseUs(r))} | ${num(dbCpuPerResponseUs(r))} | ${num(r.cpu.others * 100)}% | ${statusSummary([r])} |`,
    );
  }
  lines.push('', '</details>');
  return lines;
}

function codeBlock(text: string): string[] {
  return ['```', text, '```'];
}

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(no rows)';
  const keys = Object.keys(rows[0]);
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => String(r[k] ?? 'NULL').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
  return [
    line(keys),
    widths.map((w) => '-'.repeat(w)).join('-+-'),
    ...rows.map((r) => line(keys.map((k) => String(r[k] ?? 'NULL')))),
  ].join('\n');
}

function verdictText(v: TargetVerdict): string {
  if (v.pass === null) return 'no target';
  if (v.goal) return v.pass ? 'reached' : 'not yet reached';
  return v.pass ? 'PASS' : '**FAIL**';
}

const CHART_TITLE = `Throughput per scenario: ${TARGETS.map((t) => TARGET_LABEL[t]).join(' vs ')}`;

/** The title, the targets (each PASS or FAIL) and the notes on this run. */
function headline(results: BenchResults): string[] {
  const out: string[] = [];
  const verdicts = evaluateTargets(results);
  out.push(
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (${results.mode} mode) on ${results.finishedAt}. How to run it and how to read it: [README.md](README.md).`,
    '',
    `![${CHART_TITLE}](results.svg)`,
    '',
    '## Targets',
    '',
    '| target | measured | result |',
    '|---|---|---|',
    ...verdicts.map((v) => `| ${v.target} | ${v.figure} | ${verdictText(v)} |`),
    '',
  );
  if (results.notes.length > 0) out.push('## Notes on this run', '', ...results.notes.map((n) => `- ${n}`), '');
  return out;
}

function machineSection(results: BenchResults): string[] {
  const out: string[] = [];
  out.push('## Machine and settings', '', '| | |', '|---|---|');
  for (const [k, v] of Object.entries(results.machine)) out.push(`| ${k} | ${v} |`);
  for (const [k, v] of Object.entries(results.settings)) out.push(`| ${k} | ${v} |`);
  out.push('');
  return out;
}

/** How the SQL statements were counted, and the noise of other clients. */
function countingSection(results: BenchResults): string[] {
  const out: string[] = [];
  const b = results.counterBaseline;
  out.push(
    '## SQL statement counting',
    '',
    'Each round reads `SHOW GLOBAL STATUS` before and after; the delta, less the cost of reading the counters ' +
      `(${b.selfCost.Questions} question per read), is divided by the requests sent. Other clients of the server add noise: ` +
      `while the benchmark stood idle the server counted ${b.idleNoisePerSec.Questions.toFixed(2)} questions/s from elsewhere` +
      (b.idleNoiseAfter ? ` before the run and ${b.idleNoiseAfter.Questions.toFixed(2)}/s after it` : '') +
      ' (against thousands of requests per second under load).',
    '',
  );
  return out;
}

/** Per scenario: the three targets, the per-round ratios and every round. */
function scenarioSections(results: BenchResults): string[] {
  const out: string[] = [];
  for (const s of results.scenarios) {
    const outliers = sqlOutliers(s.rounds);
    out.push(`## ${s.title}`, '', s.description, '', ...scenarioTable(s.rounds), '');
    if (outliers.length > 0) {
      out.push(
        "Rounds whose SQL count strays from the median (the server counts every client's statements):",
        '',
        ...outliers.map((o) => `- ${o}`),
        '',
      );
    }
    out.push(...ratioTable(s.rounds), '', ...roundsDetail(s.rounds), '');
  }
  return out;
}

/** The list's figures with the small and the large table, and their ratios. */
function scaleSection(results: BenchResults): string[] {
  const out: string[] = [];
  if (results.scale.length > 0) {
    out.push(
      '## Scale: list latency with a small and a large table',
      '',
      'The list of one user with 1,000 plants (`limit=20`), first with only those 1,000 rows in the table, then with ' +
        'the table filled to the larger size (1,000 plants for each of the users). Closed loop with the usual connections, and with one connection (one request at a time).',
      '',
      '| table | connections | target | req/s | p50 ms | p99 ms |',
      '|---|---:|---|---:|---:|---:|',
    );
    for (const phase of results.scale) {
      for (const [conns, rounds] of [
        [results.scenarios[0]?.connections ?? 0, phase.loaded],
        [1, phase.single],
      ] as const) {
        for (const t of TARGETS) {
          const rs = roundsOf(rounds, t);
          if (rs.length === 0) continue;
          out.push(
            `| ${num(phase.rowsInTable)} rows, ${num(phase.users)} user${phase.users === 1 ? '' : 's'} | ${conns} | ${TARGET_LABEL[t]} | ${fmtSpread(spread(rs.map(rps)), (x) => num(x))} | ${fmtSpread(spread(rs.map(p50)), ms)} | ${fmtSpread(spread(rs.map(p99)), ms)} |`,
          );
        }
      }
    }
    const small = results.scale[0];
    const big = results.scale[results.scale.length - 1];
    if (small !== big) {
      out.push(
        '',
        `| large ÷ small table | ${TARGETS.map((t) => TARGET_LABEL[t]).join(' | ')} |`,
        `|---|${TARGETS.map(() => '---:').join('|')}|`,
      );
      for (const [label, rounds, pick] of [
        ['p50, loaded', 'loaded', p50],
        ['p99, loaded', 'loaded', p99],
        ['req/s, loaded', 'loaded', rps],
        ['p50, 1 connection', 'single', p50],
        ['p99, 1 connection', 'single', p99],
      ] as const) {
        out.push(
          `| ${label} | ${TARGETS.map((t) => ratio(spread(roundsOf(big[rounds], t).map(pick)).median / spread(roundsOf(small[rounds], t).map(pick)).median)).join(' | ')} |`,
        );
      }
    }
    out.push('');
  }
  return out;
}

function explainSection(results: BenchResults): string[] {
  const out: string[] = [];
  if (results.explain.length > 0) {
    out.push('## EXPLAIN of the list query at scale', '');
    for (const e of results.explain) {
      out.push(`${e.label}:`, '', ...codeBlock(`${e.result.sql}\n\n${table(e.result.rows)}`), '');
      if (e.result.analyze)
        out.push(
          'ANALYZE (the statement run, with the rows it actually read):',
          '',
          ...codeBlock(table(e.result.analyze)),
          '',
        );
    }
  }
  return out;
}

function traceSection(results: BenchResults): string[] {
  const out: string[] = [];
  if (results.trace) {
    out.push(
      '## SQL sent per request (general query log)',
      '',
      'Each request alone, with the server\'s general log on. "cold" is the first request of a token on that process; the others follow it.',
      '',
    );
    for (const t of TARGETS) {
      const entries = results.trace.filter((e) => e.target === t);
      if (entries.length === 0) continue;
      out.push(`### ${TARGET_LABEL[t]}`, '');
      for (const e of entries) {
        out.push(`- ${e.request}: ${e.statements.length} statement${e.statements.length === 1 ? '' : 's'}`);
        for (const sql of e.statements) out.push(`  - \`${sql.replace(/`/g, '').replace(/\s+/g, ' ').slice(0, 400)}\``);
      }
      out.push('');
    }
  }
  return out;
}

function paritySection(results: BenchResults): string[] {
  const out: string[] = [];
  if (results.parity.length > 0) {
    const bad = results.parity.filter((p) => !p.same);
    out.push(
      '## Contract parity of the peers',
      '',
      `Before measuring, the same requests went to every target; ${results.parity.length - bad.length} of ${results.parity.length} peer answers matched the service's (status, body, \`Link\`, \`WWW-Authenticate\`, \`Content-Type\`).`,
      '',
      ...bad.map((p) => `- ${TARGET_LABEL[p.target]}, ${p.request}: ${p.detail}`),
      '',
    );
  }
  return out;
}

function profileSections(results: BenchResults): string[] {
  const out: string[] = [];
  for (const p of results.profiles) {
    out.push(
      `## Where the service spends its CPU: ${p.scenario}`,
      '',
      `V8's sampling profiler (as \`node --cpu-prof\`, but started after the warm-up) in a second instance of the service, same settings, under the ${p.scenario} load; ${num(p.summary.totalMs / 1000, 1)} s profiled, ` +
        `${num(p.summary.busyShare * 100)}% of it busy. Self time, as a share of the busy time.`,
      '',
      '| by package | self ms | share |',
      '|---|---:|---:|',
      ...p.summary.packages.map((e) => `| ${e.name} | ${num(e.selfMs)} | ${num(e.share * 100, 1)}% |`),
      '',
      'Inclusive time counts a sample for every package on its synchronous stack. Express middleware calls `next()` synchronously, so a middleware early in the chain (helmet) also carries the work done after it; read it as an upper bound.',
      '',
      '| package anywhere on the stack (inclusive) | ms | share |',
      '|---|---:|---:|',
      ...p.summary.inclusive.map((e) => `| ${e.name} | ${num(e.selfMs)} | ${num(e.share * 100, 1)}% |`),
      '',
      '<details><summary>Top functions by self time</summary>',
      '',
      '| function | self ms | share |',
      '|---|---:|---:|',
      ...p.summary.functions.map(
        (e) => `| \`${e.name.replace(/\|/g, '\\|')}\` | ${num(e.selfMs)} | ${num(e.share * 100, 1)}% |`,
      ),
      '',
      '</details>',
      '',
    );
  }
  return out;
}

function memorySection(results: BenchResults): string[] {
  const out: string[] = [];
  out.push(
    '## Memory',
    '',
    `Service VmRSS when idle after start: ${results.serviceIdleRssMb === null ? 'n/a' : `${num(results.serviceIdleRssMb, 1)} MB`}; peak over the whole run (VmHWM): ${results.serviceHwmMb === null ? 'n/a' : `${num(results.serviceHwmMb, 1)} MB`}. ` +
      'The per-scenario tables give the maximum VmRSS sampled every 200 ms under load.',
    '',
  );
  return out;
}

export function renderMarkdown(results: BenchResults): string {
  return [
    ...headline(results),
    ...machineSection(results),
    ...countingSection(results),
    ...scenarioSections(results),
    ...(results.cluster ? clusterSection(results.cluster) : []),
    ...scaleSection(results),
    ...explainSection(results),
    ...traceSection(results),
    ...paritySection(results),
    ...profileSections(results),
    ...memorySection(results),
  ].join('\n');
}

const SETUP_LABEL = { single: '1 instance, single server', cluster: '2 instances, 2 Galera nodes' } as const;

function clusterSection(c: ClusterResult): string[] {
  const out = [
    '## Cluster: two instances on two Galera nodes against one on one server',
    '',
    `${c.description} The cluster started in ${num(c.startSec)} s. ${c.connections} connections in every run.`,
    '',
    '| workload | setup | req/s | p50 ms | p99 ms | CPU of the instances | CPU of the database server(s) | other processes |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  const pct = (x: number) => `${num(x * 100)}%`;
  for (const kind of ['list', 'create'] as const) {
    for (const setup of ['single', 'cluster'] as const) {
      const rs = c.rounds.filter((r) => r.workload === kind && r.setup === setup);
      if (rs.length === 0) continue;
      const db = rs.map((r) => r.cpu.db).filter((x): x is number => x !== null);
      out.push(
        `| ${kind} | ${SETUP_LABEL[setup]} | ${fmtSpread(spread(rs.map((r) => r.load.rps)), (x) => num(x))} | ${fmtSpread(spread(rs.map((r) => r.load.latencyMs.p50)), ms)} | ${fmtSpread(spread(rs.map((r) => r.load.latencyMs.p99)), ms)} | ${fmtSpread(spread(rs.map((r) => r.cpu.instances)), pct)} | ${db.length > 0 ? fmtSpread(spread(db), pct) : 'n/a'} | ${fmtSpread(spread(rs.map((r) => r.cpu.others)), pct)} |`,
      );
    }
  }
  out.push('', '| cluster ÷ single server, per round | req/s | p99 |', '|---|---:|---:|');
  for (const kind of ['list', 'create'] as const) {
    const pairs = c.rounds
      .filter((r) => r.workload === kind && r.setup === 'cluster')
      .map(
        (r) => [r, c.rounds.find((x) => x.workload === kind && x.setup === 'single' && x.round === r.round)] as const,
      )
      .filter((pair) => pair[1] !== undefined);
    const of = (pick: (r: ClusterResult['rounds'][number]) => number) =>
      fmtSpread(spread(pairs.map(([a, b]) => pick(a) / pick(b!))), ratio);
    out.push(`| ${kind} | ${of((r) => r.load.rps)} | ${of((r) => r.load.latencyMs.p99)} |`);
  }
  const statuses: Record<string, number> = {};
  for (const r of c.rounds)
    for (const [code, n] of Object.entries(r.load.status))
      statuses[`${r.setup} ${r.workload} ${code}`] = (statuses[`${r.setup} ${r.workload} ${code}`] ?? 0) + n;
  out.push(
    '',
    `Answers: ${Object.entries(statuses)
      .map(([k, n]) => `${k}: ${num(n)}`)
      .join(', ')}.`,
    '',
    '### The cost of causal reads',
    '',
    "The service's list statement (`SELECT id, name, tag FROM plants WHERE owner = ? ORDER BY id LIMIT 21`, 1,000 rows for that owner) through node 2, on two connections in alternation, one with `wsrep_sync_wait=0` and one with `3` (the service's setting), idle and while another connection inserted through node 1 without pause; milliseconds per statement, measured by the client. Each line is one pass.",
    '',
    '| writes through node 1 | sync_wait | statements | mean | p50 | p99 |',
    '|---|---:|---:|---:|---:|---:|',
    ...c.causal.map(
      (p) =>
        `| ${p.writes ? 'continuous' : 'none'} | ${p.syncWait} | ${num(p.statements)} | ${ms(p.latencyMs.mean)} | ${ms(p.latencyMs.p50)} | ${ms(p.latencyMs.p99)} |`,
    ),
    '',
  );
  if (c.faults?.length) out.push(...faultSection(c.faults));
  if (c.schemaChanges?.length) out.push(...schemaChangeSection(c.schemaChanges));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The chart: grouped bars of median req/s with min–max whiskers, written by hand.

const COLORS: Record<TargetName, string> = {
  service: '#e0234e',
  expressprod: '#2b2b2b',
  express: '#8a8a8a',
  nodehttp: '#3c873a',
};

function niceStep(max: number): number {
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Under each group of bars: the service's throughput over each Express peer's, as the targets take it. */
const GROUP_RATIOS: [TargetName, string][] = [
  ['expressprod', '÷ Express, production'],
  ['express', '÷ Express'],
];

interface Plot {
  top: number;
  plotH: number;
  barW: number;
  barGap: number;
  y: (v: number) => number;
}

/** One group's bars with their whiskers and medians, its label and the service's ratios to the Express peers. */
function groupBars(plot: Plot, label: string, stats: Spread[], x0: number, groupMid: number): string[] {
  const { top, plotH, barW, barGap, y } = plot;
  const parts: string[] = [];
  TARGETS.forEach((t, ti) => {
    const s = stats[ti];
    if (!Number.isFinite(s.median)) return;
    const x = x0 + ti * (barW + barGap);
    parts.push(
      `<rect x="${x}" y="${y(s.median)}" width="${barW}" height="${top + plotH - y(s.median)}" fill="${COLORS[t]}"><title>${esc(`${label}, ${TARGET_LABEL[t]}: ${num(s.median)} req/s [${num(s.min)}–${num(s.max)}]`)}</title></rect>`,
      `<line x1="${x + barW / 2}" x2="${x + barW / 2}" y1="${y(s.max)}" y2="${y(s.min)}" stroke="#000"/>`,
      `<line x1="${x + barW / 2 - 5}" x2="${x + barW / 2 + 5}" y1="${y(s.max)}" y2="${y(s.max)}" stroke="#000"/>`,
      `<line x1="${x + barW / 2 - 5}" x2="${x + barW / 2 + 5}" y1="${y(s.min)}" y2="${y(s.min)}" stroke="#000"/>`,
      `<text x="${x + barW / 2}" y="${y(s.max) - 5}" text-anchor="middle" font-size="10">${num(s.median)}</text>`,
    );
  });
  parts.push(
    `<text x="${x0 + groupMid}" y="${top + plotH + 18}" text-anchor="middle" font-weight="bold">${esc(label)}</text>`,
  );
  const service = stats[TARGETS.indexOf('service')].median;
  GROUP_RATIOS.forEach(([peer, text], i) => {
    const ratio = service / stats[TARGETS.indexOf(peer)].median;
    if (!Number.isFinite(ratio)) return;
    parts.push(
      `<text x="${x0 + groupMid}" y="${top + plotH + 34 + i * 15}" text-anchor="middle" font-size="11" fill="#555">service ${esc(text)}: ${ratio.toFixed(2)}x</text>`,
    );
  });
  return parts;
}

/** The colour of each target and its label, on one line at the bottom, each as wide as its label. */
function legend(left: number, baseline: number): string[] {
  const parts: string[] = [];
  let x = left;
  for (const t of TARGETS) {
    parts.push(
      `<rect x="${x}" y="${baseline - 12}" width="14" height="14" fill="${COLORS[t]}"/>`,
      `<text x="${x + 20}" y="${baseline}">${esc(TARGET_LABEL[t])}</text>`,
    );
    x += 20 + TARGET_LABEL[t].length * 7 + 25;
  }
  return parts;
}

export function renderSvg(results: BenchResults): string {
  const groups: { label: string; rounds: RoundResult[] }[] = results.scenarios.map((s) => ({
    label: s.name,
    rounds: s.rounds,
  }));
  for (const phase of results.scale) groups.push({ label: `list, ${phase.label}`, rounds: phase.loaded });

  const barW = 30;
  const barGap = 5;
  const groupW = TARGETS.length * (barW + barGap) + 90;
  const groupMid = (TARGETS.length * (barW + barGap) - barGap) / 2;
  const width = Math.max(900, 120 + groups.length * groupW);
  const height = 440;
  const left = 80;
  const top = 60;
  const plotH = 260;
  const stats = groups.map((g) => TARGETS.map((t) => spread(roundsOf(g.rounds, t).map(rps))));
  const maxY = Math.max(1, ...stats.flat().map((s) => (Number.isFinite(s.max) ? s.max : 0)));
  const step = niceStep(maxY);
  const yMax = Math.ceil(maxY / step) * step;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">Throughput, requests/s (median of ${results.settings.rounds ?? ''} rounds; whiskers: min–max)</text>`,
    `<text x="${left}" y="42" fill="#555">${esc(`${results.machine['CPU'] ?? ''}, ${results.machine['Database'] ?? ''}, Node ${results.machine['Node.js'] ?? ''}, ${results.settings.connections ?? ''} connections, ${results.finishedAt.slice(0, 10)}`)}</text>`,
  ];
  for (let v = 0; v <= yMax + 1e-9; v += step) {
    parts.push(
      `<line x1="${left}" x2="${width - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`,
      `<text x="${left - 8}" y="${y(v) + 4}" text-anchor="end" fill="#555">${num(v)}</text>`,
    );
  }
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#999"/>`);
  const plot = { top, plotH, barW, barGap, y };
  groups.forEach((g, gi) => parts.push(...groupBars(plot, g.label, stats[gi], left + 20 + gi * groupW, groupMid)));
  parts.push(...legend(left, height - 16), '</svg>');
  return parts.join('\n') + '\n';
}

const WAYS: Record<SchemaChangeWay, string> = {
  TOI: 'ALTER TABLE through HAProxy (TOI)',
  RSU: 'node by node, out of rotation (RSU)',
  runner: 'the migration runner (instant, else pt-online-schema-change)',
};

function schemaChangeSection(rounds: SchemaChangeRound[]): string[] {
  const out = [
    '### Schema changes of a large table',
    '',
    'One instance through HAProxy, 4 clients creating plants one after another, while `plants` gets an index on `(owner, name)` in each way, and then loses a column that was added just before (docs/scaling.md, "Schema changes"). The write gap is the longest time between two successful creates that overlaps the change.',
    '',
    '| change | rows | way | change took ms | longest write gap ms | failed / requests | slowest answer ms |',
    '|---|---:|---|---:|---:|---:|---:|',
    ...rounds.map(
      (r) =>
        `| ${r.change} | ${num(r.rows)} | ${WAYS[r.way]} | ${num(r.changeMs)} | ${num(r.longestGapMs)} | ${num(r.failed)} / ${num(r.requests)}${
          r.failed
            ? ` (${Object.entries(r.failedStatuses)
                .map(([s, n]) => `${s}×${num(n)}`)
                .join(', ')})`
            : ''
        } | ${num(r.slowestMs)} |`,
    ),
    '',
  ];
  return out;
}

function faultSection(faults: FaultRound[]): string[] {
  const out = [
    '### Faults of the writer node',
    '',
    'One instance through HAProxy, 4 clients creating plants one after another; node 1 (the node HAProxy writes to) killed with SIGKILL, or cut off from the other two with `gmcast.isolate=1`, 2 s into the round; writes went on for 15 s after the fault. The error window runs from the fault to the last failing answer (docs/scaling.md, "Failures").',
    '',
    '| fault | rounds | failed / requests | statuses of the failures | error window ms | slowest answer ms |',
    '|---|---:|---:|---|---:|---:|',
  ];
  for (const fault of [...new Set(faults.map((f) => f.fault))]) {
    const rs = faults.filter((f) => f.fault === fault);
    const statuses: Record<string, number> = {};
    for (const r of rs) for (const [s, n] of Object.entries(r.failedStatuses)) statuses[s] = (statuses[s] ?? 0) + n;
    const range = (xs: number[]) => (xs.length ? `${num(Math.min(...xs))}–${num(Math.max(...xs))}` : 'n/a');
    out.push(
      `| ${fault} | ${rs.length} | ${num(rs.reduce((n, r) => n + r.failed, 0))} / ${num(rs.reduce((n, r) => n + r.requests, 0))} | ${
        Object.entries(statuses)
          .map(([s, n]) => `${s}×${num(n)}`)
          .join(', ') || 'none'
      } | ${range(rs.map((r) => r.errorWindowMs))} | ${range(rs.map((r) => r.slowestMs))} |`,
    );
  }
  out.push('');
  return out;
}
