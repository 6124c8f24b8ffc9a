import {
  BadRequestException,
  Injectable,
  NestMiddleware,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { NextFunction, Request, Response, raw } from 'express';
import { isInteger, parse } from 'lossless-json';
import typeis from 'type-is';

export const BODY_LIMIT_BYTES = 16 * 1024;
const JSON_TYPES = ['application/json', 'application/*+json'];

/** Far deeper than any plant (depth 1); deep enough for any honest client. */
export const MAX_JSON_DEPTH = 32;

const readBytes = raw({ type: () => true, limit: BODY_LIMIT_BYTES, inflate: true });
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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

/** The deepest nesting of arrays and objects, counted without parsing (strings skipped). */
function nestingDepth(body: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

export function parseJsonBody(body: string): unknown {
  // Deep structures are refused before anything recurses through them (parser, validation).
  if (nestingDepth(body) > MAX_JSON_DEPTH) {
    throw new BadRequestException(`Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return parse(body, refuseProtoKeys, parseNumber);
  } catch (error) {
    if (error instanceof ForbiddenKeyError) throw new BadRequestException(error.message);
    const detail = error instanceof RangeError ? 'nested too deeply' : (error as Error).message;
    throw new BadRequestException(`Malformed JSON: ${detail}`);
  }
}

/** Strict UTF-8: invalid bytes are refused, never turned into U+FFFD and stored; so is a BOM. */
function decodeUtf8(bytes: Buffer): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new BadRequestException('Request body must not start with a byte order mark');
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw new BadRequestException('Request body is not valid UTF-8');
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
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1].toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      throw new UnsupportedMediaTypeException('Request body must be UTF-8 JSON (identity, gzip or deflate encoded)');
    }
    // A declared size over the cap is refused before a byte is read, and the connection closed,
    // instead of waiting for a body that may never come.
    const declared = Number(req.headers['content-length']);
    const encoded = (req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
    if (!encoded && declared > BODY_LIMIT_BYTES) {
      res.setHeader('Connection', 'close');
      throw new PayloadTooLargeException(`Request body exceeds ${BODY_LIMIT_BYTES} bytes`);
    }
    await new Promise<void>((resolve, reject) =>
      readBytes(req, res, (error?: unknown) =>
        error ? reject(describeReadError(error as { type?: string })) : resolve(),
      ),
    );
    const bytes = req.body as unknown;
    req.body = Buffer.isBuffer(bytes) && bytes.length > 0 ? parseJsonBody(decodeUtf8(bytes)) : undefined;
    next();
  }
}
