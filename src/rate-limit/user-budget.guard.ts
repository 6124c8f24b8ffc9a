import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Principal } from '../auth/principal';
import { chargeUserOf } from './rate-limit.middleware';

/**
 * Runs after the bearer guard: a call whose token the rate limit did not know yet (counted against
 * its address) is counted against the token's user too, now that authentication has found it. The
 * lookup stays the bearer guard's, so the rate limit itself never waits for the database.
 */
@Injectable()
export class UserBudgetGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // Most calls have nothing to charge (their user was counted already): no promise for them.
    const charged = chargeUserOf(context.switchToHttp().getRequest<{ user?: Principal }>());
    return charged === undefined ? true : charged.then(() => true);
  }
}
