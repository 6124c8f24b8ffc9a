/** The database could not be reached while the process started, for as long as DB_STARTUP_TIMEOUT allows. */
export class DatabaseUnreachableAtStartup extends Error {
  override name = 'DatabaseUnreachableAtStartup';

  constructor(timeoutMs: number, attempts: number, reason: string) {
    super(
      `The database could not be reached within ${timeoutMs / 1000} s ` +
        `(${attempts} attempt${attempts === 1 ? '' : 's'}); the last failed with ${reason}`,
    );
  }
}
