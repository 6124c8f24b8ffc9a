import { INestApplication } from '@nestjs/common';
import { Express, Response } from 'express';

/** Object keys as JSON (`"name":`), kept once written: answers repeat the same few keys. */
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 1000;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * `JSON.stringify(value)`, except that a bigint is written as a plain JSON number with all its
 * digits, where `JSON.stringify` throws. Undefined for a value without JSON text, as there.
 * Strings are escaped by `JSON.stringify` itself; this costs half of what a general-purpose
 * lossless serializer does on a page of plants (bench/RESULTS.md).
 */
export function toExactJson(value: unknown, key = ''): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        return toExactJson((value as { toJSON: (key: string) => unknown }).toJSON(key), key);
      }
      if (Array.isArray(value)) return arrayJson(value);
      // Boxed primitives hold no bigint; JSON.stringify unwraps them.
      if (value instanceof Number || value instanceof String || value instanceof Boolean) return JSON.stringify(value);
      return objectJson(value as Record<string, unknown>);
    default:
      // undefined, functions and symbols have no JSON text.
      return undefined;
  }
}

function arrayJson(array: readonly unknown[]): string {
  let text = '[';
  for (let i = 0; i < array.length; i++) {
    if (i > 0) text += ',';
    text += toExactJson(array[i], String(i)) ?? 'null';
  }
  return `${text}]`;
}

function objectJson(object: Record<string, unknown>): string {
  let text = '{';
  let first = true;
  for (const key of Object.keys(object)) {
    const member = toExactJson(object[key], key);
    if (member === undefined) continue;
    if (first) first = false;
    else text += ',';
    text += quotedKey(key) + member;
  }
  return `${text}}`;
}

/**
 * Every JSON body the app writes (handler results through Nest's reply, error bodies from the
 * filter) goes through `res.json`. Replacing it on this app's own response prototype writes BigInt
 * values as plain JSON numbers, so int64 ids leave the service exactly as they were stored, which
 * `JSON.stringify` cannot do. One mechanism on the response itself costs nothing per request,
 * where an interceptor would add an Observable pipeline to every call.
 *
 * The text is written as Express's `send` would write it for this app, which answers without
 * ETags or conditional 304s (set here, with the writer that relies on it): Content-Type and
 * Content-Length, no body for HEAD, 204 or 304. Skipping `send` saves parsing the Content-Type
 * twice, and handing Node the body as a string lets it go out with the headers in one write.
 */
export function writeJsonExactly(app: INestApplication): void {
  const express = app.getHttpAdapter().getInstance() as Express;
  // Answers are per user and change with every write: no ETag (no hash of every body on the way out)
  // and no conditional 304, not even for `If-None-Match: *`, which Express would otherwise honour.
  express.set('etag', false);
  Object.defineProperty(express.request, 'fresh', { get: () => false });
  express.response.json = function json(this: Response, body: unknown): Response {
    if (this.statusCode === 204 || this.statusCode === 304) {
      this.removeHeader('Content-Type');
      this.end();
      return this;
    }
    const text = toExactJson(body) ?? '';
    if (!this.hasHeader('Content-Type')) this.setHeader('Content-Type', 'application/json; charset=utf-8');
    this.setHeader('Content-Length', Buffer.byteLength(text));
    this.end(this.req.method === 'HEAD' ? undefined : text);
    return this;
  };
}
