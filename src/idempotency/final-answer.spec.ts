import {
  BadRequestException,
  ConflictException,
  HttpException,
  InternalServerErrorException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { IdempotencyKeyInFlight, IdempotencyKeyReused } from './idempotency.errors';
import { MOMENTARY, isFinalRefusal } from './final-answer';

class LookupFailed extends BadRequestException {
  readonly [MOMENTARY] = true;
}

describe(isFinalRefusal.name, () => {
  it.each([
    ['a 400', new BadRequestException('url must use https')],
    ['a 409', new ConflictException('A plant with id 5 already exists')],
    ['a 422', new IdempotencyKeyReused()],
  ])('keeps %s: the same request gets it again', (_name, error) => {
    expect(isFinalRefusal(error)).toBe(true);
  });

  it.each([
    ['a 400 marked momentary', new LookupFailed('url host hooks.example.com does not resolve')],
    ['a 409 while the key is in flight', new IdempotencyKeyInFlight()],
    ['a 408', new HttpException('Request Timeout', 408)],
    ['a 425', new HttpException('Too Early', 425)],
    ['a 429', new HttpException('Too Many Requests', 429)],
    ['a 500', new InternalServerErrorException()],
    ['a 503', new ServiceUnavailableException('down')],
    ['an unexpected error', new Error('boom')],
    ['a success status', new HttpException('Created', 201)],
  ])('does not keep %s: a retry may be answered otherwise', (_name, error) => {
    expect(isFinalRefusal(error)).toBe(false);
  });
});
