import { Logger } from '@nestjs/common';
import { redactCredentials } from '../common/redact-credentials';
import { isDatabaseUnavailable } from './database-errors';
import { DatabaseUnreachableAtStartup } from './startup.errors';

/** The wait after the first failed attempt; it doubles after each, up to the cap. */
export const STARTUP_RETRY_FIRST_DELAY_MS = 500;
export const STARTUP_RETRY_MAX_DELAY_MS = 5000;

/** The wait after the `attempt`-th failed attempt (from 1), before the time left cuts it. */
export function startupRetryDelayMs(attempt: number): number {
  return Math.min(STARTUP_RETRY_FIRST_DELAY_MS * 2 ** (attempt - 1), STARTUP_RETRY_MAX_DELAY_MS);
}
/** A driver's message is quoted up to this length. */
const REASON_CHARS = 300;

interface FailureFields {
  code?: unknown;
  message?: unknown;
  /** Node's connect to a name with several addresses fails with an AggregateError of one error each. */
  errors?: unknown[];
  driverError?: FailureFields;
}

/**
 * Why an attempt failed, for the log: the driver's code and message, on one line, with the
 * credentials of any URL in it masked.
 */
export function describeStartupFailure(error: unknown): string {
  const outer = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as FailureFields;
  const failure = outer.driverError ?? outer;
  const first = (failure.errors?.[0] ?? {}) as FailureFields;
  const code = typeof failure.code === 'string' ? failure.code : '';
  const message = String(failure.message || first.message || '')
    .replace(/\s+/g, ' ')
    .trim();
  const text = !code || message.includes(code) ? message || code : message ? `${code}: ${message}` : code;
  const redacted = redactCredentials(text || 'an unknown error');
  return redacted.length > REASON_CHARS ? `${redacted.slice(0, REASON_CHARS)}…` : redacted;
}

/**
 * Opens the database for a process that is starting (the service, the command line). While the
 * database cannot be reached or cannot serve yet (refused, unknown host, timed out, access denied,
 * a Galera node not ready...), `open` is tried again after a growing wait, each failure logged with
 * its reason as it happens, until `timeoutMs` (DB_STARTUP_TIMEOUT) have passed since the first
 * attempt began; then the process is told why with DatabaseUnreachableAtStartup. Any other failure
 * (a migration that fails) is thrown at once: trying it again would fail the same way.
 */
export async function openAtStartup<T>(
  open: () => Promise<T>,
  timeoutMs: number,
  logger: Pick<Logger, 'warn'> = new Logger('Database'),
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const reason = describeStartupFailure(error);
      const left = deadline - Date.now();
      if (left <= 0) throw new DatabaseUnreachableAtStartup(timeoutMs, attempt, reason);
      const delay = Math.min(startupRetryDelayMs(attempt), left);
      logger.warn(
        `Database unreachable at start-up (attempt ${attempt}): ${reason}; ` +
          `trying again in ${Math.round(delay)} ms, for at most ${Math.ceil(left / 1000)} s more`,
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
