import {
  BadRequestException,
  Injectable,
  NestMiddleware,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { NextFunction, Request, Response, text } from 'express';
import { isInteger, parse } from 'lossless-json';
import typeis from 'type-is';

export const BODY_LIMIT_BYTES = 16 * 1024;
const JSON_TYPES = ['application/json', 'application/*+json'];

const readText = text({
  type: () => true,
  limit: BODY_LIMIT_BYTES,
  defaultCharset: 'utf-8',
});

class ForbiddenKeyError extends Error {}

/**
 * Integers become BigInt so an int64 id arrives exactly (JSON.parse rounds anything above 2^53);
 * other numbers stay plain numbers. Validation then decides what each field accepts.
 */
function parseNumber(literal: string): bigint | number {
  return isInteger(literal) ? BigInt(literal) : Number(literal);
}

/** `__proto__` is never a real field; refusing it outright keeps it away from every object merge. */
function refuseProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new ForbiddenKeyError('The JSON key "__proto__" is not allowed');
  return value;
}

export function parseJsonBody(body: string): unknown {
  try {
    return parse(body, refuseProtoKeys, parseNumber);
  } catch (error) {
    if (error instanceof ForbiddenKeyError) throw new BadRequestException(error.message);
    const detail = error instanceof RangeError ? 'nested too deeply' : (error as Error).message;
    throw new BadRequestException(`Malformed JSON: ${detail}`);
  }
}

function describeReadError(error: { type?: string; status?: number }): Error {
  switch (error.type) {
    case 'entity.too.large':
      return new PayloadTooLargeException(`Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeException(
        'Request body must be UTF-8 JSON (identity, gzip or deflate encoded)',
      );
    default:
      return new BadRequestException('Request body could not be read');
  }
}

/**
 * The API speaks JSON only. Express's own JSON parser cannot keep int64 values exact, so the body is
 * read as text (same size cap, charsets and content encodings) and parsed losslessly here. Errors
 * are thrown, not passed to next(), so they reach the global exception filter like any other.
 */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    // An empty body (Content-Length: 0) is no body, whatever its type: the handler decides.
    if (!typeis.hasBody(req) || req.headers['content-length'] === '0') return next();
    if (!typeis(req, JSON_TYPES)) {
      throw new UnsupportedMediaTypeException('Request body must be JSON (Content-Type: application/json)');
    }
    await new Promise<void>((resolve, reject) =>
      readText(req, res, (error?: unknown) =>
        error ? reject(describeReadError(error as { type?: string })) : resolve(),
      ),
    );
    const raw = req.body as unknown;
    req.body = typeof raw === 'string' && raw.length > 0 ? parseJsonBody(raw) : undefined;
    next();
  }
}
