import { BadRequestException } from '@nestjs/common';
import { errorDoc } from '../openapi/error-doc';

/** A body, path or query that fails validation: every problem is named in one message. */
export class InvalidRequest extends BadRequestException {
  static readonly doc = errorDoc(
    new InvalidRequest(['name must not be blank']),
    'Invalid request: the message names every problem',
  );

  constructor(problems: readonly string[]) {
    super(problems.length > 0 ? problems.join('; ') : 'Invalid request');
  }
}
