import { HeaderObject, OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';
import { DEPRECATION_EXTENSION, DeprecationNotice, deprecationFields } from './deprecated.decorator';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/**
 * Turns each @Deprecated() operation's notice into OpenAPI's own markers: `deprecated: true`, a
 * sentence in its description, and the fields it answers with declared on each of its responses,
 * each with its one value. The notice itself is not left in the document.
 */
export function withDeprecations(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as (OperationObject & { [DEPRECATION_EXTENSION]?: DeprecationNotice }) | undefined;
      const notice = operation?.[DEPRECATION_EXTENSION];
      if (!operation || !notice) continue;
      delete operation[DEPRECATION_EXTENSION];
      operation.deprecated = true;
      const sentence =
        `**Deprecated** from ${notice.since}; it may stop answering from ${notice.sunset}` +
        (notice.link ? ` ([what to use instead](${notice.link})).` : '.');
      operation.description = operation.description ? `${operation.description}\n\n${sentence}` : sentence;
      const headers = documentedFields(notice);
      for (const response of Object.values(operation.responses) as ResponseObject[]) {
        const link = response.headers?.Link as HeaderObject | undefined;
        response.headers = { ...response.headers, ...headers };
        // An answer that has a Link of its own (a next page) carries both links.
        if (link && headers.Link) {
          response.headers.Link = {
            ...link,
            description: `${link.description ?? ''}\n\n${headers.Link.description}`.trim(),
          };
        }
      }
    }
  }
}

/**
 * The fields a browser on another origin must be allowed to read (CORS) for the document's
 * deprecated operations: none while nothing is deprecated.
 */
export function deprecationFieldNames(document: OpenAPIObject): string[] {
  const deprecated = Object.values(document.paths).some((item) =>
    METHODS.some((method) => (item[method] as OperationObject | undefined)?.deprecated),
  );
  return deprecated ? ['Deprecation', 'Sunset'] : [];
}

function documentedFields(notice: DeprecationNotice): Record<string, HeaderObject> {
  const fields = deprecationFields(notice);
  const exactly = (value: string) => ({ type: 'string' as const, enum: [value] });
  return {
    Deprecation: {
      description: `RFC 9745: the operation is deprecated from ${notice.since} (as seconds since 1970)`,
      schema: exactly(fields.Deprecation),
    },
    Sunset: {
      description: `RFC 8594: the operation may stop answering from ${notice.sunset}`,
      schema: exactly(fields.Sunset),
    },
    ...(fields.Link === undefined
      ? {}
      : {
          Link: {
            description: `\`${fields.Link}\` (RFC 9745): where to read what to use instead`,
            schema: { type: 'string' as const },
          },
        }),
  };
}
