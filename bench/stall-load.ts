/**
 * The load of the stall drill (stall.ts): a child process that runs one create round per IPC
 * message, autocannon with keep-alive connections creating plants, and watches it as it runs. It
 * tells the drill at once (an IPC message) when nothing has been answered for `slowMs`, or when a
 * connection has had a request in flight for `slowMs`, so that the drill captures the database and
 * the target while it lasts; and it answers each round with every request slower than `slowMs`,
 * every whole second of the round in which nothing was answered, and the requests still in flight
 * when the round ended (autocannon destroys their sockets).
 */
import autocannon from 'autocannon';
import { buildRequests } from './loadgen';

export interface StallJob {
  url: string;
  token: string;
  connections: number;
  durationSec: number;
  nextId: string;
  slowMs: number;
}

/** A request that took longer than `slowMs`: when it was sent (epoch ms), how long it took, its status. */
export interface SlowRequest {
  sentAt: number;
  ms: number;
  status: number;
}

/** What the load tells the drill while a round runs. */
export interface StallEvent {
  kind: 'silence' | 'slow-in-flight';
  /** Since when (epoch ms): the last answer, or the oldest request still in flight. */
  since: number;
  at: number;
}

export interface StallRoundResult {
  startedAt: number;
  endedAt: number;
  responses: number;
  sent: number;
  rps: number;
  p99Ms: number;
  maxMs: number;
  status: Record<string, number>;
  /** Socket errors and timeouts (autocannon's `errors`). */
  errors: number;
  slow: SlowRequest[];
  /** Whole seconds of the round (epoch seconds) in which nothing was answered. */
  silentSeconds: number[];
  /** Requests in flight when the round ended, their sockets destroyed with them. */
  abortedInFlight: number;
  /** Of those, the ones that had been in flight longer than `slowMs`: as slow as a slow answer. */
  abortedSlow: number;
  nextId: string;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * Per connection, since when its request has been in flight: the last answer it got (or the round's
 * start). With one request at a time per connection, a connection that got no answer for `slowMs`
 * has had a request in flight that long.
 */
class Watch {
  readonly lastAnswerOf = new Map<object, number>();
  lastAnswer: number;
  private silenceReported = false;
  private slowReported = false;

  constructor(
    private readonly startedAt: number,
    private readonly connections: number,
    private readonly slowMs: number,
    private readonly tell: (event: StallEvent) => void,
  ) {
    this.lastAnswer = startedAt;
  }

  answered(client: object, at: number): void {
    this.lastAnswer = at;
    this.lastAnswerOf.set(client, at);
  }

  /** The oldest request still in flight, by when it was sent (its connection's last answer). */
  oldestInFlight(): number {
    let oldest = this.lastAnswerOf.size < this.connections ? this.startedAt : Infinity;
    for (const at of this.lastAnswerOf.values()) oldest = Math.min(oldest, at);
    return oldest;
  }

  check(now: number): void {
    const silent = now - this.lastAnswer >= this.slowMs;
    if (silent && !this.silenceReported) this.tell({ kind: 'silence', since: this.lastAnswer, at: now });
    this.silenceReported = silent;
    const oldest = this.oldestInFlight();
    const slow = now - oldest >= this.slowMs;
    if (slow && !silent && !this.slowReported) this.tell({ kind: 'slow-in-flight', since: oldest, at: now });
    this.slowReported = slow;
  }
}

/** Runs one round and watches it; `tell` gets the stall events as they happen. */
export async function runStallRound(job: StallJob, tell: (event: StallEvent) => void): Promise<StallRoundResult> {
  const { requests, counters } = buildRequests({ kind: 'create', nextId: job.nextId });
  const startedAt = Date.now();
  const watch = new Watch(startedAt, job.connections, job.slowMs, tell);
  const seconds = new Map<number, number>();
  const slow: SlowRequest[] = [];
  let latencies = new Float64Array(1 << 15);
  let n = 0;
  const timer = setInterval(() => watch.check(Date.now()), 50);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        pipelining: 1,
        duration: job.durationSec,
        // Longer than any round: a request is never given up by the client, only aborted at the end.
        timeout: 3600,
        headers: { authorization: `Bearer ${job.token}` },
        requests,
      },
      (error: unknown, done: autocannon.Result) =>
        error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(done),
    );
    instance.on('response', (client: object, status: number, _bytes: number, ms: number) => {
      const at = Date.now();
      watch.answered(client, at);
      const second = Math.floor(at / 1000);
      seconds.set(second, (seconds.get(second) ?? 0) + 1);
      if (ms > job.slowMs) slow.push({ sentAt: at - ms, ms, status });
      if (n === latencies.length) {
        const bigger = new Float64Array(n * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[n++] = ms;
    });
  });
  clearInterval(timer);
  const endedAt = Date.now();
  return summarise(
    job,
    { startedAt, endedAt, result, seconds, slow, watch, latencies: latencies.subarray(0, n) },
    {
      nextId: counters().nextCreateId ?? job.nextId,
    },
  );
}

function summarise(
  job: StallJob,
  round: {
    startedAt: number;
    endedAt: number;
    result: autocannon.Result;
    seconds: Map<number, number>;
    slow: SlowRequest[];
    watch: Watch;
    latencies: Float64Array;
  },
  { nextId }: { nextId: string },
): StallRoundResult {
  const { startedAt, endedAt, result, seconds, slow, watch } = round;
  const sorted = round.latencies.sort();
  const status: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) status[code] = stats.count ?? 0;
  // The whole seconds inside the round: the first and last, cut by its start and end, are left out.
  const silentSeconds: number[] = [];
  for (let s = Math.ceil(startedAt / 1000); s + 1 <= Math.floor(endedAt / 1000); s++) {
    if (!seconds.has(s)) silentSeconds.push(s);
  }
  const abortedInFlight = Math.max(0, result.requests.sent - sorted.length - result.errors);
  // Connections that got no answer for `slowMs` before the end had a request in flight that long.
  const answered = [...watch.lastAnswerOf.values()];
  const unanswered = job.connections - answered.length;
  const abortedSlow =
    answered.filter((at) => endedAt - at > job.slowMs).length + (endedAt - startedAt > job.slowMs ? unanswered : 0);
  return {
    startedAt,
    endedAt,
    responses: sorted.length,
    sent: result.requests.sent,
    rps: sorted.length / ((endedAt - startedAt) / 1000),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1] : NaN,
    status,
    errors: result.errors,
    slow,
    silentSeconds,
    abortedInFlight,
    abortedSlow: Math.min(abortedSlow, abortedInFlight),
    nextId,
  };
}

if (require.main === module) {
  process.on('message', (message: { seq: number; job: StallJob }) => {
    runStallRound(message.job, (event) => process.send?.({ seq: message.seq, event })).then(
      (result) => process.send?.({ seq: message.seq, result }),
      (error: unknown) => process.send?.({ seq: message.seq, error: String((error as Error)?.stack ?? error) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
