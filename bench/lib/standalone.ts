/** What the benchmarks that answer one question (log-line.ts, jwt-list.ts) share. */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const LIST_PATH = '/plants?limit=20';

export const log = (message: string) =>
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** The command line of `npm run start:prod` (`node <flags> dist/main.js`), with this Node.js. */
export function startProdArgv(root: string): string[] {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts['start:prod'];
  const [node, ...rest] = script.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`npm run start:prod is not "node [flags] <script>": ${script}`);
  return [process.execPath, ...rest];
}

/** The list load: `GET /plants?limit=20` with one token, for `seconds`. */
export function listLoad(
  port: number,
  token: string,
  seconds: number,
  connections: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}${LIST_PATH}`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `[min–max]` of ratios, three decimals. */
export const range = (values: number[]) => `[${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}]`;
