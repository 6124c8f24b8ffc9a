/**
 * What a request pays in the server-span handler (src/tracing/server-spans.ts) once tracing is on,
 * measured alone: the built tree's handler, started as the service starts it (OTLP endpoint set,
 * `OTEL_TRACES_SAMPLER=parentbased_traceidratio`), wrapped around a handler that does nothing and
 * called in a loop with a list request's headers, in CPU time per call (process.cpuUsage). No
 * server, database or load: a cost of a microsecond, which a two-core machine shared with other
 * work cannot resolve from whole requests, shows here.
 *
 * Each case runs in a fresh process, REPETITIONS times `CALLS` calls after as many to warm up;
 * BENCH_HANDLER_RUNS processes per case and tree, trees and cases alternating. Given several built
 * trees (an older commit's, say), each is measured the same way.
 *
 *   npm run build && npm run bench:tracing-handler [-- /path/to/another/built/tree ...]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { integer } from './lib/env';
import { OUT, ROOT, log, runMain } from './lib/harness';
import { median } from './lib/side-by-side';

const CALLS = 300_000;
const REPETITIONS = 7;
const RUNS = integer(process.env.BENCH_HANDLER_RUNS, 5);
const CALLER_NOT_SAMPLED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

interface Case {
  name: string;
  /** The handler alone, without tracing. */
  off?: boolean;
  ratio: string;
  traceparent?: string;
}

const CASES: Case[] = [
  { name: 'tracing off (the handler alone)', off: true, ratio: '0' },
  { name: 'ratio 0, no trace headers', ratio: '0' },
  { name: 'ratio 0.1, no trace headers', ratio: '0.1' },
  { name: 'ratio 0.1, a caller that did not sample', ratio: '0.1', traceparent: CALLER_NOT_SAMPLED },
];

/** Run by each child: ns per call, one figure per repetition, on stdout. */
const CHILD = `
const [root, off, traceparent] = process.argv.slice(1);
const tracing = require(root + '/dist/tracing/tracing.js');
if (off !== '1') tracing.startTracing(process.env);
const handler = () => {};
const wrapped = tracing.withServerSpans(handler);
const headers = {
  host: '127.0.0.1:3321',
  connection: 'keep-alive',
  authorization: 'Bearer pst_' + 'A'.repeat(43),
  'user-agent': 'autocannon',
  accept: '*/*',
  ...(traceparent ? { traceparent } : {}),
};
const req = { url: '/plants?limit=20', method: 'GET', headers, socket: { remoteAddress: '127.0.0.1' } };
// A sampled request's span never ends here (no 'close'): what is measured is what the handler does
// before it hands the request on.
const res = { once() {}, on() {} };
for (let i = 0; i < ${CALLS}; i++) wrapped(req, res);
const out = [];
for (let r = 0; r < ${REPETITIONS}; r++) {
  const start = process.cpuUsage();
  for (let i = 0; i < ${CALLS}; i++) wrapped(req, res);
  const used = process.cpuUsage(start);
  out.push(((used.user + used.system) * 1000) / ${CALLS});
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
`;

function measure(root: string, test: Case): number {
  const child = spawnSync(process.execPath, ['-e', CHILD, root, test.off ? '1' : '0', test.traceparent ?? ''], {
    cwd: root,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: test.ratio,
    },
  });
  if (child.status !== 0) throw new Error(`${root}: ${test.name}: ${child.stderr}`);
  return median(JSON.parse(child.stdout) as number[]);
}

async function main(): Promise<void> {
  const roots = [ROOT, ...process.argv.slice(2).map((root) => resolve(root))];
  const figures = new Map<string, number[]>();
  for (let run = 0; run < RUNS; run++) {
    log(`run ${run + 1}/${RUNS}`);
    for (const test of CASES) {
      for (const root of roots) {
        const key = `${test.name}\t${root}`;
        figures.set(key, [...(figures.get(key) ?? []), measure(root, test)]);
      }
    }
  }
  const rows = CASES.flatMap((test) =>
    roots.map((root) => {
      const runs = figures.get(`${test.name}\t${root}`)!;
      return `| ${test.name} | ${root} | ${median(runs).toFixed(0)} | ${runs.map((ns) => ns.toFixed(0)).join(', ')} |`;
    }),
  );
  const report = [
    '| case | tree | ns per call, median | each process (median of its repetitions) |',
    '|---|---|---:|---|',
    ...rows,
    '',
    `Settings: ${RUNS} processes per case and tree, each ${REPETITIONS} × ${CALLS.toLocaleString('en')} calls after ` +
      `${CALLS.toLocaleString('en')} to warm up, OTEL_TRACES_SAMPLER=parentbased_traceidratio, Node.js ${process.version}.`,
  ].join('\n');
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'tracing-handler.md'), `${report}\n`);
  process.stdout.write(`${report}\n`);
}

runMain(main);
