import { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

const STARTED_AT = Symbol('requestStartedAt');

type ClockedResponse = ServerResponse & { [STARTED_AT]?: number };

/**
 * One start time per request, shared by the request log and the metrics, so both report the same
 * duration. The first middleware to see the request records it; the others keep it.
 */
export function startRequestClock(res: ServerResponse): void {
  if ((res as ClockedResponse)[STARTED_AT] === undefined) (res as ClockedResponse)[STARTED_AT] = performance.now();
}

/** Milliseconds since the request started (0 if no middleware started its clock). */
export function requestElapsedMs(res: ServerResponse): number {
  const startedAt = (res as ClockedResponse)[STARTED_AT];
  return startedAt === undefined ? 0 : performance.now() - startedAt;
}
