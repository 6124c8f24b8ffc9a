import {
  BadRequestException,
  HttpException,
  HttpStatus,
  PayloadTooLargeException,
  RequestTimeoutException,
} from '@nestjs/common';
import { errorDoc } from '../openapi/error-doc';

/** Bytes Node's HTTP parser cannot read as an HTTP/1.1 request. */
export class NotHttp extends BadRequestException {
  static readonly doc = errorDoc(new NotHttp(), 'Not a valid HTTP/1.1 request; the connection is then closed');

  constructor() {
    super('The request is not valid HTTP/1.1');
  }
}

/** RFC 9112 section 3.2: a server must refuse an HTTP/1.1 request that names no host. */
export class HostMissing extends BadRequestException {
  static readonly doc = errorDoc(
    new HostMissing(),
    'An HTTP/1.1 request without a `Host` header; the connection is then closed',
  );

  constructor() {
    super('An HTTP/1.1 request must carry a Host header');
  }
}

/** A path segment that is not valid percent-encoding; the message never quotes it (it may be a pasted token). */
export class UndecodablePath extends BadRequestException {
  static readonly doc = errorDoc(new UndecodablePath(), 'A path parameter that is not valid percent-encoding');

  constructor() {
    super('The path is not valid percent-encoding');
  }
}

/** Node's limits on how long a request may take to arrive, which the service keeps. */
export class RequestTimedOut extends RequestTimeoutException {
  static readonly doc = errorDoc(
    new RequestTimedOut(),
    "The request line and headers did not arrive within 60 s, or the whole request within 300 s (Node's limits); " +
      'the connection is then closed',
  );

  constructor() {
    super('The request did not arrive in time');
  }
}

/** Chunk extensions of a chunked body past Node's parser limit, on any route, whether it reads a body or not. */
export class ChunkExtensionsTooLarge extends PayloadTooLargeException {
  static readonly doc = errorDoc(
    new ChunkExtensionsTooLarge(),
    'A chunked body whose chunk extensions exceed 16 KiB, on any route; the connection is then closed',
  );

  constructor() {
    super('The chunk extensions of the body are too large');
  }
}

export class ExpectationNotMet extends HttpException {
  static readonly doc = errorDoc(
    new ExpectationNotMet(),
    'An `Expect` header other than `100-continue`; the connection is then closed',
  );

  constructor() {
    super('The only expectation the service meets is "Expect: 100-continue"', HttpStatus.EXPECTATION_FAILED);
  }
}

export class HeadersTooLarge extends HttpException {
  static readonly doc = errorDoc(
    new HeadersTooLarge(),
    'Request line and headers over 16 KiB together; the connection is then closed',
  );

  constructor() {
    // Not among Nest's HttpStatus names (RFC 6585).
    super('The request line and headers exceed 16 KiB', 431);
  }
}
