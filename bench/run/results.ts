/**
 * Reporting of `npm run bench`: the results assembled with the machine and the settings, the notes
 * on what else ran meanwhile, and the files: results.json, RESULTS.md and results.svg.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { measureCounterBaseline } from '../lib/db';
import { OUT, RATE_LIMIT_NEVER_REACHED, ROOT, log } from '../lib/harness';
import { ratios, renderMarkdown, renderSvg, spread } from '../lib/report';
import { Spawned, cpuModel, readMemory } from '../lib/sys';
import { BenchResults, TARGETS, TARGET_LABEL } from '../lib/types';
import type { Context } from './context';
import type { DatabaseServer, Pinning } from './setup';
import { QUICK, S, START_PROD } from './settings';

/** What the run measured, as it goes into BenchResults. */
export type Measurements = Pick<
  BenchResults,
  'parity' | 'trace' | 'scenarios' | 'scale' | 'cluster' | 'explain' | 'profiles' | 'serviceIdleRssMb'
>;

export interface RunFacts {
  startedAt: string;
  notes: string[];
  server: DatabaseServer;
  pinning: Pinning;
  source: { commit: string; dirty: string };
  service: Spawned;
}

function machine({ server, pinning, source }: RunFacts): BenchResults['machine'] {
  const { info } = server;
  const autocannon = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')) as {
    version: string;
  };
  return {
    CPU: `${cpuModel()}, ${os.cpus().length} cores`,
    Memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    Kernel: `${os.type()} ${os.release()}`,
    'Node.js': process.version,
    Database: `${info.version} (${info.comment}), InnoDB buffer pool ${(Number(info.bp) / 1024 ** 2).toFixed(0)} MiB`,
    Service: `commit ${source.commit}${source.dirty ? ' + uncommitted changes in src/' : ''}, \`node ${[...START_PROD.nodeFlags, START_PROD.script].join(' ')}\` (npm run start:prod), NODE_ENV=production, LOG_LEVEL=${S.logLevel}, RATE_LIMIT_PER_MINUTE=${RATE_LIMIT_NEVER_REACHED}, METRICS_PORT=0`,
    Peers: `\`node ${[...START_PROD.nodeFlags, '<peer>.js'].join(' ')}\`: the service's Node flags, so that they do not count for either side; the ${TARGET_LABEL.expressprod} with the service's LOG_LEVEL, RATE_LIMIT_PER_MINUTE and METRICS_PORT`,
    Pinning: pinning.pin
      ? `service and peers on CPU 0; ${pinning.dbPid ? 'database server, ' : ''}load generator and bench driver on CPU 1 (taskset)`
      : 'none',
    'Load generator': `autocannon ${autocannon.version} (programmatic API, own process), HTTP/1.1 keep-alive, no pipelining`,
  };
}

function settings(): BenchResults['settings'] {
  return {
    rounds: String(S.rounds),
    'round duration': `${S.durationSec} s`,
    'warm-up': `${S.warmupSec} s per target and scenario`,
    connections: String(S.connections),
    'database pool': `${S.poolSize} connections per process`,
    'peer token cache TTL': `${S.peerTokenTtlMs} ms`,
    'scale rounds': String(S.scaleRounds),
    'round order': `${TARGETS.map((t) => TARGET_LABEL[t]).join(', ')} in odd rounds; reversed in even rounds`,
    'quiet gate': S.quiet
      ? `wait until other processes use < ${(S.quietThreshold * 100).toFixed(0)}% of a core (at most ${S.quietMaxWaitSec} s per run, ${S.quietBudgetSec} s in all)`
      : 'off',
  };
}

/** How much CPU processes outside the benchmark used during the measured runs, and the quiet gate's waits. */
function othersNote(ctx: Context, m: Measurements): string {
  const allRounds: { cpu: { others: number } }[] = [
    ...m.scenarios.flatMap((x) => x.rounds),
    ...m.scale.flatMap((x) => [...x.loaded, ...x.single]),
    ...(m.cluster?.rounds ?? []),
  ];
  const busyRounds = allRounds.filter((r) => r.cpu.others > 0.25);
  return (
    `Processes outside the benchmark used a median ${(spread(allRounds.map((r) => r.cpu.others)).median * 100).toFixed(0)}% of a core during the measured runs ` +
    `(max ${(Math.max(0, ...allRounds.map((r) => r.cpu.others)) * 100).toFixed(0)}%; ${busyRounds.length} of ${allRounds.length} runs above 25%). ` +
    (S.quiet
      ? `Before each run the benchmark waited for them to fall below ${(S.quietThreshold * 100).toFixed(0)}% of a core (${Math.round(ctx.quietWaitSec)} s of waiting in all, budget ${S.quietBudgetSec} s; ${ctx.busyStarts} runs started busy after waiting ${S.quietMaxWaitSec} s or once the budget was spent).`
      : 'BENCH_QUIET=0: runs did not wait for a quiet machine.')
  );
}

/** The results of the run, with the database's idle noise measured once more at the end. */
export async function collectResults(ctx: Context, facts: RunFacts, m: Measurements): Promise<BenchResults> {
  const idleAfter = await measureCounterBaseline(ctx.conn, 2000);
  const results: BenchResults = {
    startedAt: facts.startedAt,
    finishedAt: new Date().toISOString(),
    mode: QUICK ? 'quick' : 'full',
    machine: machine(facts),
    settings: settings(),
    notes: facts.notes,
    counterBaseline: { ...ctx.baseline, idleNoiseAfter: idleAfter.idleNoisePerSec },
    ...m,
    serviceHwmMb: readMemory(facts.service.pid)?.hwmMb ?? null,
  };
  facts.notes.push(othersNote(ctx, m));
  if (results.counterBaseline.idleNoisePerSec.Questions > 1 || idleAfter.idleNoisePerSec.Questions > 1) {
    facts.notes.push(
      'Other clients were using the database server during the run: the SQL statements per request carry their noise.',
    );
  }
  return results;
}

/**
 * Sections of RESULTS.md between `<!-- recorded -->` and `<!-- /recorded -->` hold measurements made
 * by other runs (another Node.js line, a flag turned off); a new run keeps them, at the end.
 */
function keepRecordedSections(file: string, report: string): string {
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const kept = previous.match(/<!-- recorded -->[\s\S]*?<!-- \/recorded -->/g) ?? [];
  return kept.length === 0 ? report : `${report.trimEnd()}\n\n${kept.join('\n\n')}\n`;
}

/** RESULTS.md (its recorded sections kept) and results.svg in `dir`. */
export function writeReport(results: BenchResults, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const resultsFile = join(dir, 'RESULTS.md');
  writeFileSync(resultsFile, keepRecordedSections(resultsFile, renderMarkdown(results)));
  writeFileSync(join(dir, 'results.svg'), renderSvg(results));
  log(`wrote ${resultsFile} and results.svg beside it`);
}

/** results.json in bench/.out; RESULTS.md and results.svg in the report folder; the ratios to the log. */
export function writeResults(results: BenchResults): void {
  writeFileSync(
    join(OUT, 'results.json'),
    JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v), 2),
  );
  writeReport(results, S.reportDir);
  for (const s of results.scenarios) {
    for (const peer of ['expressprod', 'express'] as const) {
      const ratio = ratios(s.rounds, peer, (r) => r.load.rps);
      log(
        `${s.name}: service ÷ ${TARGET_LABEL[peer]} throughput ${ratio.median.toFixed(2)}x [${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}]`,
      );
    }
  }
}
