import { RETRY_JITTER, webhooksSettings } from '../../src/config/env/webhooks';
import { Facts, markdownTable } from './fragments';
import { aboutDuration, aboutHours, code, shortDuration } from './readable';

const { WEBHOOK_RETRY_SCHEDULE, WEBHOOK_POLL_INTERVAL_MS } = webhooksSettings;
const HOUR = 3_600_000;

/** A span and how far the jitter stretches it either way: `25 and 30 hours`. */
function jittered(span: number): string {
  const [low, high] = [span * (1 - RETRY_JITTER), span * (1 + RETRY_JITTER)];
  if (low < 2 * HOUR) return `${aboutHours(low)} and ${aboutHours(high)}`;
  return `${Math.round(low / HOUR)} and ${Math.round(high / HOUR)} hours`;
}

/**
 * What a retry schedule comes to: the attempts an event gets, the time they span, and when each
 * attempt is made, computed from the schedule's steps (the waits before the 2nd, 3rd, ...
 * attempt) and the dispatcher's jitter. By default, the default WEBHOOK_RETRY_SCHEDULE.
 */
export function retryScheduleFacts(
  schedule: readonly number[] = WEBHOOK_RETRY_SCHEDULE.defaultValue,
  written = WEBHOOK_RETRY_SCHEDULE.default ?? '',
): Facts {
  const span = schedule.reduce((sum, step) => sum + step, 0);
  let elapsed = 0;
  const rows = schedule.map((step, index) => {
    elapsed += step;
    return [String(index + 2), shortDuration(step), aboutDuration(elapsed)];
  });
  const first = [
    '1',
    `up to about ${code('WEBHOOK_POLL_INTERVAL_MS')}`,
    `about ${aboutDuration(WEBHOOK_POLL_INTERVAL_MS.defaultValue)}`,
  ];
  return {
    'retry-schedule': { text: code(written) },
    'retry-attempts': { text: `${schedule.length + 1} attempts` },
    'retry-span': { text: aboutHours(span) },
    'retry-span-jittered': { text: jittered(span) },
    'retry-jitter': { text: `${Math.round(RETRY_JITTER * 100)}%` },
    'retry-table': {
      block: true,
      text: markdownTable(['attempt', 'wait before it', 'after the change'], [first, ...rows]),
    },
  };
}
