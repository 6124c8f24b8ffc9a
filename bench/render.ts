/**
 * Writes bench/RESULTS.md and bench/results.svg again from the raw results of the last run
 * (bench/.out/results.json), without measuring anything: for changes to the report's layout.
 *
 *   npx tsc -p bench/tsconfig.json && node node_modules/.cache/plantstore-bench/render.js
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderMarkdown, renderSvg } from './lib/report';
import { BenchResults } from './lib/types';

const bench = join(process.cwd(), 'bench');
const results = JSON.parse(readFileSync(join(bench, '.out', 'results.json'), 'utf8')) as BenchResults;
writeFileSync(join(bench, 'RESULTS.md'), renderMarkdown(results));
writeFileSync(join(bench, 'results.svg'), renderSvg(results));
process.stderr.write('wrote bench/RESULTS.md and bench/results.svg\n');
