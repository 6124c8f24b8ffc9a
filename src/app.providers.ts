import { Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, Reflector } from '@nestjs/core';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { MemoizedReflector } from './common/metadata/memoized-reflector';
import { createValidationPipe } from './common/validation/validation.pipe';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';

/**
 * What applies to every route: declared once, for AppModule and for the controller specs, so a
 * spec answers as the service does.
 */
export const GLOBAL_PROVIDERS: Provider[] = [
  // The global guards read route metadata on every request; it never changes once built.
  { provide: Reflector, useClass: MemoizedReflector },
  { provide: APP_FILTER, useClass: AllExceptionsFilter },
  // Guards run in this order: the rate limit first, so failed authentications are limited too.
  { provide: APP_GUARD, useClass: RateLimitGuard },
  { provide: APP_GUARD, useClass: BearerAuthGuard },
  { provide: APP_PIPE, useFactory: createValidationPipe },
];
