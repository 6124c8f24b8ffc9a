import { NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import { IncomingMessage, Server, ServerResponse } from 'node:http';
import { writeJsonExactly } from '../common/json/exact-json';
import { closeWhenBodyUnread } from '../common/json/json-body';

/** JSON in and out: answers written with exact int64s, request bodies read only by the routes that take one. */
export function setUpJsonBodies(app: NestExpressApplication): void {
  writeJsonExactly(app);
  const server = app.getHttpServer() as Server;
  closeWhenBodyUnread((app.getHttpAdapter().getInstance() as Express).response, server);
  // `Expect: 100-continue` is answered by the body reader when it wants the body, so a request
  // refused first (limits, authentication, a declared length over the cap) never gets it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
}
