/**
 * Writes bench/RESULTS.md and bench/results.svg again from the raw results of the last run
 * (bench/.out/results.json), without measuring anything: for changes to the report's layout.
 * BENCH_REPORT_DIR writes them elsewhere, as for `npm run bench`.
 *
 *   npx tsc -p bench/tsconfig.json && node node_modules/.cache/plantstore-bench/render.js
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUT } from './lib/harness';
import { BenchResults } from './lib/types';
import { writeReport } from './run/results';
import { S } from './run/settings';

writeReport(JSON.parse(readFileSync(join(OUT, 'results.json'), 'utf8')) as BenchResults, S.reportDir);
