import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';
import { IncomingMessage, Server, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync, InputType, ZlibOptions } from 'node:zlib';
import { isInteger, parse } from 'lossless-json';
import getRawBody from 'raw-body';
import { hasBody as hasBodyHeaders, TypeIs } from 'type-is';
import { lingeringClose } from '../http/lingering-close';
import { BodyNotJson, BodyTooLarge, MalformedJson } from './json-body.errors';
import { BODY_LIMIT_BYTES, MAX_JSON_DEPTH } from './json-body.limits';

// type-is 3 compiles the accepted types once; it matches as `typeis(req, types)` did in 2.
const JSON_TYPES = new TypeIs(['application/json', 'application/*+json']);

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
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
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
    throw new MalformedJson(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return parse(body, refuseProtoKeys, parseNumber);
  } catch (error) {
    if (error instanceof ForbiddenKeyError) throw new BadRequestException(error.message);
    const detail = error instanceof RangeError ? 'nested too deeply' : (error as Error).message;
    throw new MalformedJson(detail);
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

type Decoder = (bytes: InputType, options: ZlibOptions) => Buffer;

/**
 * The content codings a body may arrive in. Each is decoded in one bounded call: the encoded bytes
 * are at most BODY_LIMIT_BYTES, and decoding stops with an error past BODY_LIMIT_BYTES of output.
 * zstd is not among them, although every supported Node line's zlib decodes it: the documented
 * codings are these (openapi.json), and a new one is a change of the contract.
 */
const DECODERS: Record<string, Decoder | null> = {
  identity: null,
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync as Decoder,
};

const UNSUPPORTED_ENCODING = 'Request body must be UTF-8 JSON, sent as is or gzip, deflate or br encoded';

function decode(bytes: Buffer, decoder: Decoder | null): Buffer {
  if (decoder === null) return bytes;
  try {
    return decoder(bytes, { maxOutputLength: BODY_LIMIT_BYTES });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new BodyTooLarge();
    throw new BadRequestException('Request body could not be decoded with its Content-Encoding');
  }
}

function describeReadError(error: { type?: string }): Error {
  if (error.type === 'entity.too.large') return new BodyTooLarge();
  if (error.type === 'request.size.invalid') {
    return new BadRequestException('Request body length does not match its Content-Length');
  }
  return new BadRequestException('Request body could not be read');
}

/** Whether a request carries a body: a Content-Length other than 0, or a Transfer-Encoding. */
function hasBody(req: IncomingMessage): boolean {
  return hasBodyHeaders(req) && req.headers['content-length'] !== '0';
}

/**
 * Reads and parses a request's JSON body, at most BODY_LIMIT_BYTES of it on the wire and after
 * decoding alike:
 * - the type, charset and content coding are checked before a byte is read (415);
 * - a declared Content-Length over the cap is refused at once (413), and `100 Continue` is sent
 *   only once the body is really wanted, so such a client never sends it;
 * - a body without a length (chunked) is refused as soon as the cap is passed, not at its end;
 * - a compressed body is decoded in one call bounded on both sides, so no small input can make it
 *   work long and no output can grow past the cap.
 * A refused body is left unread: the connection is closed after the answer (closeWhenBodyUnread).
 *
 * Integers become BigInt so an int64 id arrives exactly (JSON.parse rounds anything above 2^53).
 * Returns undefined for a request without a body (no body headers, or Content-Length: 0).
 */
export async function readJsonBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  if (!JSON_TYPES.request(req)) {
    throw new BodyNotJson();
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1].toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaTypeException(UNSUPPORTED_ENCODING);
  }
  const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decoder = Object.hasOwn(DECODERS, coding) ? DECODERS[coding] : undefined;
  if (decoder === undefined) throw new UnsupportedMediaTypeException(UNSUPPORTED_ENCODING);

  const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
  if (declared !== null && declared > BODY_LIMIT_BYTES) throw new BodyTooLarge();
  if (/^100-continue$/i.test(req.headers.expect ?? '') && !res.headersSent) res.writeContinue();

  let bytes: Buffer;
  try {
    bytes = await getRawBody(req, { limit: BODY_LIMIT_BYTES, length: declared });
  } catch (error) {
    throw describeReadError(error as { type?: string });
  }
  const decoded = decode(bytes, decoder);
  return decoded.length > 0 ? parseJsonBody(decodeUtf8(decoded)) : undefined;
}

/**
 * An answer written before its request's body has fully arrived (refused: 401, 413, 429...; or a
 * route that reads no body) closes the connection after it. Node would otherwise read and discard
 * the rest of the body to keep the connection, however long the client goes on sending. The close
 * lingers (lingeringClose): what the client is still sending is read, within bounds, so that it
 * gets the answer rather than a reset.
 */
export function closeWhenBodyUnread(response: { writeHead: ServerResponse['writeHead'] }, server: Server): void {
  const linger = lingeringClose(server);
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!this.req.complete && hasBody(this.req)) linger(this);
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
}
