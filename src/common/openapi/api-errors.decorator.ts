import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { rateLimitSettings } from '../../config/env/rate-limit';
import { ErrorDto } from './error.dto';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: the message names every problem',
  401: 'No token, or an unknown, expired or revoked one',
  403: 'The token lacks the scope this call needs',
  404: 'No such plant for this user (a plant of another user is not told apart from a missing one)',
  409: 'This user already has a plant with this id; the existing plant is unchanged',
  413: 'Request body over 16 KiB',
  415: 'Request body is not JSON',
  429: 'Too many requests from this user (or, without a valid token, this address); retry after `Retry-After` seconds',
  500: 'Unexpected failure; details are in the service log, never in the response',
  503: 'The database is unavailable; retry later',
};

/** What a client sees for each status, shown in the document instead of one generic example. */
const EXAMPLE_MESSAGES: Record<number, string> = {
  400: 'name must not be blank',
  401: 'The access token is invalid, expired or revoked',
  403: 'This token lacks the scope plants:write',
  404: 'Plant 42 not found',
  409: 'A plant with id 42 already exists',
  413: 'Request body exceeds 16384 bytes',
  415: 'Request body must be JSON (Content-Type: application/json)',
  429: `Too many requests: at most ${rateLimitSettings.RATE_LIMIT_PER_MINUTE.defaultValue} per minute; retry in 42 s`,
  500: 'Internal server error',
  503: 'The database is unavailable; try again shortly',
};

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

/**
 * Documents one error status with the `{error, message}` body, described for this route where the
 * common description below does not fit it.
 */
export function ApiErrorResponse(
  status: number,
  description: string,
  exampleMessage: string,
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorDto),
    ApiResponse({
      status,
      description,
      type: ErrorDto,
      example: { error: status, message: exampleMessage },
      headers: status === 401 || status === 403 ? CHALLENGE : status === 429 ? RATE_LIMIT : undefined,
    }),
  );
}

/** Documents the listed error statuses, each with the `{error, message}` body. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiErrorResponse(status, DESCRIPTIONS[status], EXAMPLE_MESSAGES[status])),
  );
}
