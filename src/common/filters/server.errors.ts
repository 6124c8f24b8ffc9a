import { InternalServerErrorException, ServiceUnavailableException } from '@nestjs/common';
import { errorDoc } from '../openapi/error-doc';

/** Anything unexpected: the details go to the service log, never to the client. */
export class InternalError extends InternalServerErrorException {
  static readonly doc = errorDoc(
    new InternalError(),
    'Unexpected failure; details are in the service log, never in the response',
  );

  constructor() {
    super('Internal server error');
  }
}

/**
 * The database cannot be reached or cannot serve now, or the data source is closed because the
 * instance is shutting down: what the data-access API (src/database) throws for such a failure,
 * with the driver's error as its `cause`, for the service log.
 */
export class DatabaseUnavailable extends ServiceUnavailableException {
  static readonly doc = errorDoc(new DatabaseUnavailable(), 'The database is unavailable; retry later');

  constructor(cause?: unknown) {
    super('The database is unavailable; try again shortly', { cause });
  }
}
