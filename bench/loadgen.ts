/**
 * The load generator: a child process of run.ts (started pinned to its own core with taskset) that
 * runs one autocannon job per IPC message and answers with the figures. Latencies are recorded
 * from every response with sub-millisecond resolution (autocannon's own histogram keeps whole
 * milliseconds, too coarse for a loopback service).
 */
import autocannon from 'autocannon';

export type Workload =
  | { kind: 'list'; path: string }
  | { kind: 'create'; nextId: string }
  | { kind: 'delete'; nextId: string }
  /** 80% list, 15% create, 5% delete, in a fixed cycle of 20 requests. */
  | { kind: 'mix'; listPath: string; nextCreateId: string; nextDeleteId: string };

export interface LoadJob {
  url: string;
  /** Instead of `url`: several instances, the connections split evenly among them (one result). */
  urls?: string[];
  token: string;
  workload: Workload;
  connections: number;
  durationSec: number;
}

export interface LoadResult {
  /** Responses received. */
  responses: number;
  /** Requests written, including those still in flight when the run stopped. */
  sent: number;
  elapsedSec: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  status: Record<string, number>;
  errors: number;
  timeouts: number;
  nextCreateId?: string;
  nextDeleteId?: string;
  loadgenCpuSec: number;
}

type Request = autocannon.Request;

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function plantBody(id: bigint): string {
  return `{"id":${id},"name":"bench plant ${id}","tag":"bench"}`;
}

/**
 * Fresh headers for each built request. autocannon's builder writes Content-Length into the
 * headers object it is given; when that object is shared, a GET after a POST would carry the
 * POST's Content-Length without a body, and the connection would hang waiting for it.
 */
function withHeaders(req: Request, json: boolean): Request {
  const { authorization } = req.headers ?? {};
  req.headers = json ? { authorization, 'content-type': 'application/json' } : { authorization };
  return req;
}

/** The request sequence of a workload, and a way to read the id counters back after the run. */
export function buildRequests(workload: Workload): { requests: Request[]; counters: () => Partial<LoadResult> } {
  switch (workload.kind) {
    case 'list':
      return { requests: [{ method: 'GET', path: workload.path, headers: {} }], counters: () => ({}) };
    case 'create': {
      let next = BigInt(workload.nextId);
      const setupRequest = (req: Request): Request => {
        req.body = plantBody(next++);
        return withHeaders(req, true);
      };
      return {
        requests: [{ method: 'POST', path: '/plants', setupRequest }],
        counters: () => ({ nextCreateId: String(next) }),
      };
    }
    case 'delete': {
      let next = BigInt(workload.nextId);
      const setupRequest = (req: Request): Request => {
        req.path = `/plants/${next++}`;
        return withHeaders(req, false);
      };
      return {
        requests: [{ method: 'DELETE', path: '/plants/0', setupRequest }],
        counters: () => ({ nextDeleteId: String(next) }),
      };
    }
    case 'mix': {
      let nextCreate = BigInt(workload.nextCreateId);
      let nextDelete = BigInt(workload.nextDeleteId);
      let i = 0;
      const setupRequest = (req: Request): Request => {
        const slot = i++ % 20;
        withHeaders(req, slot >= 16 && slot < 19);
        if (slot < 16) {
          req.method = 'GET';
          req.path = workload.listPath;
          req.body = undefined;
        } else if (slot < 19) {
          req.method = 'POST';
          req.path = '/plants';
          req.body = plantBody(nextCreate++);
        } else {
          req.method = 'DELETE';
          req.path = `/plants/${nextDelete++}`;
          req.body = undefined;
        }
        return req;
      };
      return {
        requests: [{ method: 'GET', path: workload.listPath, setupRequest }],
        counters: () => ({ nextCreateId: String(nextCreate), nextDeleteId: String(nextDelete) }),
      };
    }
  }
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const { requests, counters } = buildRequests(job.workload);
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();

  const urls = job.urls ?? [job.url];
  const run = (url: string, connections: number) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url,
          connections,
          pipelining: 1,
          duration: job.durationSec,
          timeout: 10,
          headers: { authorization: `Bearer ${job.token}` },
          requests,
        },
        (error: unknown, done: autocannon.Result) =>
          error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(done),
      );
      instance.on('response', (_client: autocannon.Client, _status: number, _bytes: number, responseTime: number) => {
        if (n === latencies.length) {
          const bigger = new Float64Array(latencies.length * 2);
          bigger.set(latencies);
          latencies = bigger;
        }
        latencies[n++] = responseTime;
      });
    });
  // One autocannon per instance, in parallel; the request sequences (and their id counters) are
  // shared, so creates never repeat an id across instances.
  const results = await Promise.all(
    urls.map((url, i) =>
      run(url, Math.floor(job.connections / urls.length) + (i < job.connections % urls.length ? 1 : 0)),
    ),
  );

  const elapsedSec = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const sorted = latencies.subarray(0, n).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  const status: Record<string, number> = {};
  for (const result of results)
    for (const [code, stats] of Object.entries(result.statusCodeStats ?? {}))
      status[code] = (status[code] ?? 0) + (stats.count ?? 0);
  const total = (pick: (r: autocannon.Result) => number) => results.reduce((sum, r) => sum + pick(r), 0);

  return {
    responses: n,
    sent: total((r) => r.requests.sent),
    elapsedSec,
    rps: n / elapsedSec,
    latencyMs: {
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p99: percentile(sorted, 0.99),
      max: n > 0 ? sorted[n - 1] : NaN,
      mean: n > 0 ? sum / n : NaN,
    },
    status,
    errors: total((r) => r.errors),
    timeouts: total((r) => r.timeouts),
    loadgenCpuSec: (cpu.user + cpu.system) / 1e6,
    ...counters(),
  };
}

if (require.main === module) {
  process.on('message', (message: { seq: number; job: LoadJob }) => {
    runLoad(message.job).then(
      (result) => process.send?.({ seq: message.seq, result }),
      (error: unknown) => process.send?.({ seq: message.seq, error: String((error as Error)?.stack ?? error) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
