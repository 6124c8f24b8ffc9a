import ts from 'typescript';

const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);
const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull());

/**
 * openapi-typescript's `transform`: every int64 becomes `bigint`. Ids go up to 2^63 - 1, which a
 * JavaScript number cannot hold exactly, and the client reads and writes them exactly.
 */
export function int64AsBigint(schema: { format?: string; nullable?: boolean }): ts.TypeNode | undefined {
  if (schema.format !== 'int64') return undefined;
  return schema.nullable ? ts.factory.createUnionTypeNode([BIGINT, NULL]) : BIGINT;
}
