import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { rateLimitSettings } from '../../config/env/rate-limit';
import { ErrorDoc } from './error-doc';
import { ErrorDto } from './error.dto';

const CHALLENGE = {
  'WWW-Authenticate': {
    description: 'RFC 6750 challenge, e.g. `Bearer realm="plant-store", error="invalid_token"`',
    schema: { type: 'string' },
  },
};

/** The fields on every rate-limited answer (draft-ietf-httpapi-ratelimit-headers). */
export const RATE_LIMIT_FIELDS = {
  RateLimit: {
    description: 'Requests left in the current window and seconds until it resets, e.g. `"default";r=0;t=42`',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: `The limit: requests per window and the window in seconds, e.g. \`"default";q=${rateLimitSettings.RATE_LIMIT_PER_MINUTE.defaultValue};w=60\``,
    schema: { type: 'string' },
  },
};

const RATE_LIMIT = {
  'Retry-After': { description: 'Seconds until the next request is accepted', schema: { type: 'integer' } },
  ...RATE_LIMIT_FIELDS,
};

/** Documents the listed failures, each with the `{error, message}` body and its example. */
export function ApiErrors(...errors: ErrorDoc[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorDto),
    ...errors.map(({ status, description, example }) =>
      ApiResponse({
        status,
        description,
        type: ErrorDto,
        example: { error: status, message: example },
        headers: status === 401 || status === 403 ? CHALLENGE : status === 429 ? RATE_LIMIT : undefined,
      }),
    ),
  );
}
