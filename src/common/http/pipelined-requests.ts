import { AsyncResource } from 'node:async_hooks';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** RFC 9110 §9.2.1: the methods a client may expect to have no effect on the server. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * Runs pipelined requests one at a time whenever one of them is unsafe (RFC 9112 §9.3.2: only safe
 * requests may be processed in parallel). Node parses a pipeline and emits every request at once;
 * a DELETE that needs no body would otherwise overtake the POST before it, still reading its body.
 *
 * Node queues the responses of a pipeline and gives each its socket when every earlier response
 * has finished, so a request that arrives with its socket in hand has nothing before it and runs
 * at once: the common, unpipelined case costs one property read and, for unsafe methods, one
 * WeakMap write. A pipelined request waits for its socket if it is unsafe itself, or if an unsafe
 * request before it on the connection has not finished.
 */
export function serialisingUnsafePipelines(handler: Handler): Handler {
  const lastUnsafe = new WeakMap<Socket, ServerResponse>();
  return function dispatch(req: IncomingMessage, res: ServerResponse): void {
    const unsafe = !SAFE_METHODS.has(req.method as string);
    if (res.socket !== null) {
      if (unsafe) lastUnsafe.set(req.socket, res);
      handler(req, res);
      return;
    }
    const earlier = lastUnsafe.get(req.socket);
    if (unsafe) lastUnsafe.set(req.socket, res);
    if (unsafe || (earlier !== undefined && !earlier.writableFinished)) {
      // In the async context the request arrived in (its trace span's), not in that of the
      // response whose end hands the socket on.
      res.once(
        'socket',
        AsyncResource.bind(() => handler(req, res)),
      );
    } else {
      handler(req, res);
    }
  };
}
