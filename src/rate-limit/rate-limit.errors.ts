import { HttpException, HttpStatus } from '@nestjs/common';
import { errorDoc } from '../common/openapi/error-doc';
import { rateLimitSettings } from '../config/env/rate-limit';

export class TooManyRequests extends HttpException {
  static readonly doc = errorDoc(
    new TooManyRequests(rateLimitSettings.RATE_LIMIT_PER_MINUTE.defaultValue, 42),
    'Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds',
  );

  constructor(perMinute: number, retryAfterSeconds: number) {
    super(
      `Too many requests: at most ${perMinute} per minute; retry in ${retryAfterSeconds} s`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}
