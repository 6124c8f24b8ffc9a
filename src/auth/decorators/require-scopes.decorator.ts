import { SetMetadata } from '@nestjs/common';
import { Scope } from '../principal';

export const REQUIRED_SCOPES_KEY = 'requiredScopes';

/** The scopes a token must carry for this route; checked by the global bearer guard. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES_KEY, scopes);
