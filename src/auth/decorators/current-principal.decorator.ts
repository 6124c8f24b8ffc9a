import { ExecutionContext, createParamDecorator } from '@nestjs/common';
import { Request } from 'express';
import { Principal } from '../principal';

/** The authenticated caller, as set on the request by the bearer guard. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal =>
    context.switchToHttp().getRequest<Request & { user: Principal }>().user,
);
