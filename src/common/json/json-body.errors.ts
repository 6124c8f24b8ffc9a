import { BadRequestException, PayloadTooLargeException, UnsupportedMediaTypeException } from '@nestjs/common';
import { errorDoc } from '../openapi/error-doc';
import { BODY_LIMIT_BYTES, MAX_JSON_DEPTH } from './json-body.limits';

/** A body that does not parse as JSON: what the parser found, or how deep it nests. */
export class MalformedJson extends BadRequestException {
  static readonly doc = errorDoc(
    new MalformedJson(`nested deeper than ${MAX_JSON_DEPTH} levels`),
    'Request body is not JSON text: malformed, or nested too deeply',
  );

  constructor(problem: string) {
    super(`Malformed JSON: ${problem}`);
  }
}

/** A body over BODY_LIMIT_BYTES, on the wire or once decoded. */
export class BodyTooLarge extends PayloadTooLargeException {
  static readonly doc = errorDoc(new BodyTooLarge(), `Request body over ${BODY_LIMIT_BYTES / 1024} KiB`);

  constructor() {
    super(`Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
  }
}

/** A body whose Content-Type is not JSON. */
export class BodyNotJson extends UnsupportedMediaTypeException {
  static readonly doc = errorDoc(new BodyNotJson(), 'Request body is not JSON');

  constructor() {
    super('Request body must be JSON (Content-Type: application/json)');
  }
}
