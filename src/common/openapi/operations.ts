import { OpenAPIObject, OperationObject } from '@nestjs/swagger';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** Each operation of the document, with its method and path template. */
export function* operationsOf(
  document: OpenAPIObject,
): Generator<{ method: string; path: string; operation: OperationObject }> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) yield { method: method.toUpperCase(), path, operation };
    }
  }
}
