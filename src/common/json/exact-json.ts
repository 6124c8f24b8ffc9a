import { INestApplication } from '@nestjs/common';
import { Express, Response } from 'express';
import { stringify } from 'lossless-json';

/**
 * Every JSON body the app writes (handler results through Nest's reply, error bodies from the
 * filter) goes through `res.json`. Replacing it on this app's own response prototype writes BigInt
 * values as plain JSON numbers, so int64 ids leave the service exactly as they were stored, which
 * `JSON.stringify` cannot do. One mechanism on the response itself costs nothing per request,
 * where an interceptor would add an Observable pipeline to every call.
 */
export function writeJsonExactly(app: INestApplication): void {
  const express = app.getHttpAdapter().getInstance() as Express;
  express.response.json = function json(this: Response, body: unknown): Response {
    if (!this.get('Content-Type')) this.set('Content-Type', 'application/json; charset=utf-8');
    return this.send(stringify(body) ?? '');
  };
}
