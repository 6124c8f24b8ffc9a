import { INestApplication } from '@nestjs/common';
import { Express, Response } from 'express';

/** Native on every supported Node.js line; TypeScript's libraries do not declare it yet. */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

const bigintsAsRawJson = (_key: string, value: unknown): unknown =>
  typeof value === 'bigint' ? rawJSON(value.toString()) : value;

/**
 * `JSON.stringify(value)`, except that a bigint is written as a plain JSON number with all its
 * digits, where `JSON.stringify` throws: the bigint becomes raw JSON text (`JSON.rawJSON`) in a
 * replacer. Undefined for a value without JSON text, as there.
 */
export function toExactJson(value: unknown): string | undefined {
  return JSON.stringify(value, bigintsAsRawJson);
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
