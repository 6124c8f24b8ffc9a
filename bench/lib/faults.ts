/**
 * The cluster scenario's fault drill: one instance writing through HAProxy while the node HAProxy
 * writes to crashes (SIGKILL) or is partitioned away (Galera's `gmcast.isolate`), and how long
 * clients see errors each time (docs/scaling.md, "Failures").
 */
import type { LocalCluster } from './cluster';
import { sleep } from './sys';

export type Fault = 'writer crashed' | 'writer partitioned';

export interface FaultRound {
  fault: Fault;
  round: number;
  requests: number;
  failed: number;
  /** Statuses of the failed requests (503, or anything else, which would be a defect). */
  failedStatuses: Record<string, number>;
  /** From the fault to the arrival of the last failing answer; 0 when nothing failed. */
  errorWindowMs: number;
  slowestMs: number;
}

export interface Answer {
  status: number;
  at: number;
  ms: number;
}

/** `writers` clients creating plants one after another, until stopped. */
export function writeLoad(url: string, token: string, firstId: bigint, writers: number) {
  const answers: Answer[] = [];
  let running = true;
  let next = firstId;
  const loop = async () => {
    while (running) {
      const id = next++;
      const at = Date.now();
      let status: number;
      try {
        const res = await fetch(`${url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: `{"id":${id},"name":"Fault drill"}`,
          signal: AbortSignal.timeout(30_000),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch {
        status = 0; // no answer at all
      }
      answers.push({ status, at, ms: Date.now() - at });
    }
  };
  const loops = Array.from({ length: writers }, loop);
  return {
    answers,
    next: () => next,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** What the fault did to the answers of its round (those of the 2 s before it included). */
function measure(fault: Fault, round: number, answers: Answer[], faultAt: number): FaultRound {
  const failures = answers.filter((a) => a.status !== 200);
  const failedStatuses: Record<string, number> = {};
  for (const f of failures) failedStatuses[String(f.status)] = (failedStatuses[String(f.status)] ?? 0) + 1;
  return {
    fault,
    round,
    requests: answers.length,
    failed: failures.length,
    failedStatuses,
    errorWindowMs: failures.length === 0 ? 0 : Math.max(...failures.map((a) => a.at + a.ms)) - faultAt,
    slowestMs: Math.max(0, ...answers.map((a) => a.ms)),
  };
}

const FAULTS: Record<Fault, { inject: string; restore: string }> = {
  'writer crashed': { inject: 'kill-node', restore: 'start-node' },
  'writer partitioned': { inject: 'isolate-node', restore: 'heal-node' },
};

/**
 * Each fault `rounds` times, alternating: writes for 2 s, the fault on node 1, writes until 15 s
 * after it, node 1 restored, and a pause until HAProxy routes to it again.
 */
export async function runFaultDrill(
  cluster: LocalCluster,
  serviceUrl: string,
  token: string,
  { rounds, writers, firstId, log }: { rounds: number; writers: number; firstId: bigint; log: (line: string) => void },
): Promise<FaultRound[]> {
  const results: FaultRound[] = [];
  let nextId = firstId;
  for (let round = 1; round <= rounds; round++) {
    for (const fault of Object.keys(FAULTS) as Fault[]) {
      const load = writeLoad(serviceUrl, token, nextId, writers);
      await sleep(2000);
      const faultAt = Date.now();
      await cluster.script(FAULTS[fault].inject, '1');
      await sleep(Math.max(0, faultAt + 15_000 - Date.now()));
      await load.stop();
      nextId = load.next();
      const result = measure(fault, round, load.answers, faultAt);
      results.push(result);
      log(
        `cluster faults ${fault} ${round}/${rounds}: ${result.failed} of ${result.requests} failed [${Object.entries(
          result.failedStatuses,
        )
          .map(([s, n]) => `${s}×${n}`)
          .join(' ')}], error window ${result.errorWindowMs} ms, slowest answer ${result.slowestMs} ms`,
      );
      await cluster.script(FAULTS[fault].restore, '1');
      // HAProxy puts node 1 back after two good checks a second apart.
      await sleep(4000);
    }
  }
  return results;
}
