import { Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { createValidationPipe } from './common/validation/validation.pipe';
import { UserBudgetGuard } from './rate-limit/user-budget.guard';

/**
 * What applies to every route: declared once, for AppModule and for the controller specs, so a
 * spec answers as the service does.
 */
export const GLOBAL_PROVIDERS: Provider[] = [
  { provide: APP_FILTER, useClass: AllExceptionsFilter },
  // In this order: authentication finds the token, then its user's budget is counted if the rate
  // limit (a middleware, before routing) could not tell the user without a lookup.
  { provide: APP_GUARD, useClass: BearerAuthGuard },
  { provide: APP_GUARD, useClass: UserBudgetGuard },
  { provide: APP_PIPE, useFactory: createValidationPipe },
];
