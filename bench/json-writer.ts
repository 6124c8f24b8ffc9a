/**
 * The service's exact-int64 JSON writer (`toExactJson`, src/common/json/exact-json.ts) against the
 * native ways of writing a bigint as a JSON number, on the bodies the service writes: a page of the
 * list, one of 100 plants, a plant.created event's data and an error body.
 *
 * - `JSON.rawJSON` through a replacer: `JSON.stringify(value, (k, v) => typeof v === 'bigint' ?
 *   JSON.rawJSON(String(v)) : v)`, a drop-in replacement of the writer;
 * - `JSON.rawJSON` made beforehand: the ids already raw JSON when the body is built, and
 *   `JSON.stringify` without a replacer (what the callers would have to do instead; the time to make
 *   them is counted).
 *
 * Every writer must write the same text for every body, or the benchmark stops. In each round every
 * writer serializes each body for a fixed number of calls, in an order reversed every other round,
 * in this one process; the figure is the time per call, and each writer's ratio to `toExactJson` is
 * taken within its round (a shared machine slows a whole round alike). No database, no service: the
 * built `dist/` of this tree is loaded (`npm run build` first).
 *
 *   npm run bench:json      # BENCH_JSON_ROUNDS (9), about a minute
 *
 * Run it with another Node.js first on PATH for that line.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { integer } from './lib/env';
import { OUT, ROOT, log, runMain } from './lib/harness';
import { median, orderOf, ratioSummary } from './lib/side-by-side';

type Writer = (body: unknown) => string | undefined;

interface Plant {
  id: bigint;
  name: string;
  tag?: string;
}

/** A page as the list answers it: ids beyond 2^53, names, every other plant tagged. */
function page(size: number): Plant[] {
  return Array.from({ length: size }, (_, i) => {
    const id = 9_007_199_254_740_993n + BigInt(i * 7919);
    return i % 2 === 0
      ? { id, name: `Monstera deliciosa ${i}`, tag: 'tropical' }
      : { id, name: `Ficus lyrata "fiddle-leaf" ${i}` };
  });
}

/** Each body with the calls of one measurement: about a tenth of a second each. */
const BODIES: { name: string; body: unknown; calls: number }[] = [
  { name: 'list page (20 plants)', body: page(20), calls: 20_000 },
  { name: 'page of 100 plants', body: page(100), calls: 4_000 },
  {
    name: 'plant.created data',
    body: { id: 9_007_199_254_740_993n, name: 'Monstera deliciosa', tag: 'tropical' },
    calls: 200_000,
  },
  { name: 'error body', body: { error: 409, message: 'A plant with this id already exists' }, calls: 200_000 },
];

/** Native on every supported Node.js line; TypeScript's libraries do not declare it yet. */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

const rawReplacer = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? rawJSON(value.toString()) : value;

/** The body with its bigints as raw JSON, made as the callers would make it, then stringified. */
function rawBeforehand(value: unknown): unknown {
  if (typeof value === 'bigint') return rawJSON(value.toString());
  if (Array.isArray(value)) return value.map(rawBeforehand);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = rawBeforehand((value as Record<string, unknown>)[key]);
  return out;
}

function writers(): { name: string; write: Writer }[] {
  const built = join(ROOT, 'dist', 'common', 'json', 'exact-json.js');
  if (!existsSync(built)) throw new Error(`${built} is missing: npm run build first`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { toExactJson } = require(built) as { toExactJson: Writer };
  return [
    { name: 'toExactJson', write: toExactJson },
    { name: 'JSON.rawJSON, replacer', write: (body) => JSON.stringify(body, rawReplacer) },
    { name: 'JSON.rawJSON, made beforehand', write: (body) => JSON.stringify(rawBeforehand(body)) },
  ];
}

/** Nanoseconds per call of `write` on `body`, over `calls` calls. */
function timePerCall(write: Writer, body: unknown, calls: number): number {
  let length = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) length += Buffer.byteLength(write(body)!);
  const ns = Number(process.hrtime.bigint() - start) / calls;
  if (length === 0) throw new Error('nothing written');
  return ns;
}

function measure(rounds: number) {
  const all = writers();
  for (const { name, body } of BODIES) {
    const expected = all[0].write(body);
    for (const w of all) if (w.write(body) !== expected) throw new Error(`${w.name} writes ${name} differently`);
  }
  // ns[body][writer][round]; a first round, not recorded, warms every writer up.
  const ns = BODIES.map(() => all.map(() => [] as number[]));
  for (let round = -1; round < rounds; round++) {
    for (const [b, { body, calls }] of BODIES.entries()) {
      for (const w of orderOf(all.length, round + 1)) {
        const time = timePerCall(all[w].write, body, calls);
        if (round >= 0) ns[b][w].push(time);
      }
    }
    if (round >= 0) log(`round ${round + 1}/${rounds}`);
  }
  return { names: all.map((w) => w.name), ns };
}

function report(names: string[], ns: number[][][], rounds: number): string {
  const lines = [
    `| body | ${names.map((n) => `${n} µs/call`).join(' | ')} | ${names
      .slice(1)
      .map((n) => `${n} ÷ toExactJson, time per call`)
      .join(' | ')} |`,
    `|---|${names.map(() => '---:').join('|')}|${names
      .slice(1)
      .map(() => '---:')
      .join('|')}|`,
  ];
  for (const [b, { name }] of BODIES.entries()) {
    const perCall = ns[b].map((times) => (median(times) / 1000).toFixed(2));
    const ratios = ns[b].slice(1).map((times) => ratioSummary(times.map((t, r) => t / ns[b][0][r])));
    lines.push(`| ${name} | ${perCall.join(' | ')} | ${ratios.join(' | ')} |`);
  }
  lines.push(
    '',
    `Medians of ${rounds} rounds (${BODIES.map((b) => `${b.calls} calls`).join(', ')} per writer in a round), in one process; ratios per round, median [min–max] (above 1: slower than toExactJson). Node.js ${process.version}.`,
  );
  return lines.join('\n');
}

function main(): Promise<void> {
  const rounds = integer(process.env.BENCH_JSON_ROUNDS, 9);
  const { names, ns } = measure(rounds);
  const text = report(names, ns, rounds);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'json-writer.md'), `${text}\n`);
  process.stdout.write(`${text}\n`);
  return Promise.resolve();
}

runMain(main);
