import { HeaderObject, OpenAPIObject, ResponseObject } from '@nestjs/swagger';
import { DEPRECATION_EXTENSION } from './deprecated.decorator';
import { deprecationFieldNames, withDeprecations } from './deprecation-document';

function document(): OpenAPIObject {
  return {
    openapi: '3.0.0',
    info: { title: 'x', version: '1.0.0' },
    paths: {
      '/old': {
        get: {
          description: 'Lists the old things.',
          [DEPRECATION_EXTENSION]: { since: '2026-12-01', sunset: '2027-06-30', link: '/docs/migrate' },
          responses: {
            '200': {
              description: 'A page',
              headers: { Link: { description: 'The next page', schema: { type: 'string' } } },
            },
            '401': { description: 'No token' },
          },
        },
        post: { responses: { '200': { description: 'Created' } } },
      },
    },
  } as OpenAPIObject;
}

describe(withDeprecations.name, () => {
  it('marks the operation deprecated, says until when, and declares its fields on every answer', () => {
    const doc = document();
    withDeprecations(doc);
    const operation = doc.paths['/old'].get!;
    const responses = operation.responses as Record<string, ResponseObject>;
    expect(operation).not.toHaveProperty(DEPRECATION_EXTENSION);
    expect(operation.deprecated).toBe(true);
    expect(operation.description).toBe(
      'Lists the old things.\n\n**Deprecated** from 2026-12-01; it may stop answering from 2027-06-30 ' +
        '([what to use instead](/docs/migrate)).',
    );
    for (const status of ['200', '401']) {
      expect(responses[status].headers).toMatchObject({
        Deprecation: { schema: { type: 'string', enum: ['@1796083200'] } },
        Sunset: { schema: { type: 'string', enum: ['Wed, 30 Jun 2027 00:00:00 GMT'] } },
        Link: { schema: { type: 'string' } },
      });
    }
    // The next page's link keeps its description, and the deprecation link is added to it.
    expect((responses['200'].headers?.Link as HeaderObject).description).toBe(
      'The next page\n\n`</docs/migrate>; rel="deprecation"` (RFC 9745): where to read what to use instead',
    );
  });

  it('leaves an operation without a notice as it is', () => {
    const doc = document();
    withDeprecations(doc);
    expect(doc.paths['/old'].post).toEqual(document().paths['/old'].post);
  });

  it('lets a browser read Deprecation and Sunset once an operation is deprecated', () => {
    const doc = document();
    expect(deprecationFieldNames(doc)).toEqual([]);
    withDeprecations(doc);
    expect(deprecationFieldNames(doc)).toEqual(['Deprecation', 'Sunset']);
  });
});
