import { HeaderObject, OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';
import { operationsOf } from '../common/openapi/operations';
import { DEPRECATION_EXTENSION, DeprecationNotice, deprecationFields } from './deprecated.decorator';

/**
 * Turns each @Deprecated() operation's notice into OpenAPI's own markers: `deprecated: true`, a
 * sentence in its description, and the fields it answers with declared on each of its responses,
 * each with its one value. The notice itself is not left in the document.
 */
export function withDeprecations(document: OpenAPIObject): void {
  for (const { operation } of operationsOf(document)) {
    const noticed = operation as OperationObject & { [DEPRECATION_EXTENSION]?: DeprecationNotice };
    const notice = noticed[DEPRECATION_EXTENSION];
    if (!notice) continue;
    delete noticed[DEPRECATION_EXTENSION];
    operation.deprecated = true;
    const sentence =
      `**Deprecated** from ${notice.since}; it may stop answering from ${notice.sunset}` +
      (notice.link ? ` ([what to use instead](${notice.link})).` : '.');
    operation.description = operation.description ? `${operation.description}\n\n${sentence}` : sentence;
    const headers = documentedFields(notice);
    for (const response of Object.values(operation.responses) as ResponseObject[]) {
      const link = response.headers?.Link as HeaderObject | undefined;
      response.headers = { ...response.headers, ...headers };
      // An answer with a Link of its own (a next page) has both, its route adding to the field.
      if (link && headers.Link) {
        response.headers.Link = {
          ...link,
          description: `${link.description ?? ''}\n\n${headers.Link.description}`.trim(),
        };
      }
    }
  }
}

/**
 * The fields a browser on another origin must be allowed to read (CORS) for the document's
 * deprecated operations: none while nothing is deprecated.
 */
export function deprecationFieldNames(document: OpenAPIObject): string[] {
  for (const { operation } of operationsOf(document)) if (operation.deprecated) return ['Deprecation', 'Sunset'];
  return [];
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
