import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiResponse,
  ExampleObject,
  HeadersObject,
  OperationObject,
  ResponseObject,
  getSchemaPath,
} from '@nestjs/swagger';
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

/** The headers that come with a failure of this status. */
function headersOf(status: number): HeadersObject | undefined {
  return status === 401 || status === 403 ? CHALLENGE : status === 429 ? RATE_LIMIT : undefined;
}

/**
 * Each failure's `{error, message}` example, named after its error. Failures that share a status
 * share its response: their descriptions are its paragraphs and their examples sit side by side,
 * as @nestjs/swagger merges two responses of one status declared on one route.
 */
function examplesOf(error: ErrorDoc): Record<string, Required<Pick<ExampleObject, 'summary' | 'value'>>> {
  return { [error.name]: { summary: error.description, value: { error: error.status, message: error.example } } };
}

/** Documents the listed failures, each with the `{error, message}` body and its example. */
export function ApiErrors(...errors: ErrorDoc[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorDto),
    ...errors.map((error) =>
      ApiResponse({
        status: error.status,
        description: error.description,
        type: ErrorDto,
        examples: examplesOf(error),
        headers: headersOf(error.status),
      }),
    ),
  );
}

/**
 * Adds the failures to an operation of a built document, as ApiErrors would have declared them on
 * its route: for what applies to many routes without any of them saying so (see
 * src/setup/openapi-document.ts). A failure the operation already declares is left as it is.
 */
export function addErrorResponses(operation: OperationObject, errors: readonly ErrorDoc[]): void {
  for (const error of errors) {
    const status = String(error.status);
    const response = operation.responses[status] as ResponseObject | undefined;
    const media = response?.content?.['application/json'];
    if (media?.examples?.[error.name] !== undefined) continue;
    if (media?.example !== undefined) {
      throw new Error(`${operation.operationId} ${status}: a single example; declare its failures with ApiErrors`);
    }
    const headers = { ...headersOf(error.status), ...response?.headers };
    operation.responses[status] = {
      ...response,
      description: [response?.description, error.description].filter(Boolean).join('\n\n'),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        ...response?.content,
        'application/json': {
          schema: { $ref: getSchemaPath(ErrorDto) },
          ...media,
          examples: { ...media?.examples, ...examplesOf(error) },
        },
      },
    };
  }
}
