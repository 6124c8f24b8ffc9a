import type { Request } from 'express';
import { IncomingMessage } from 'node:http';

/**
 * The client's address, the one the request log, the rate limit and the trace spans all use:
 * Express's `req.ip`, which is the socket's address unless TRUST_PROXY (`trust proxy`, set in
 * src/setup/http-server.ts) trusts the proxy that sent X-Forwarded-For. No other header counts
 * (neither `Forwarded` nor `X-Real-IP`): any client can send them.
 *
 * Without X-Forwarded-For `req.ip` is the socket's address whatever TRUST_PROXY says, so that is
 * read directly: parsing the header through proxy-addr for nothing is most of what a log line costs
 * to build. A request Express has not taken yet (the trace span's start) has no `req.ip`, and no
 * proxy is trusted for it. Undefined once the client has gone, if the socket was not read before.
 */
export function clientAddress(req: IncomingMessage): string | undefined {
  if (req.headers['x-forwarded-for'] === undefined) return req.socket?.remoteAddress;
  return (req as Partial<Pick<Request, 'ip'>>).ip ?? req.socket?.remoteAddress;
}
