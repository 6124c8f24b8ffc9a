import { AsyncResource } from 'node:async_hooks';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The connection's unsafe request still running, if any. */
const LAST_UNSAFE = Symbol('lastUnsafe');
type UnsafeHolder = Socket & { [LAST_UNSAFE]?: ServerResponse };

function holdUntilFinished(socket: UnsafeHolder, res: ServerResponse): void {
  socket[LAST_UNSAFE] = res;
  res.on('finish', letGo);
}

/** One listener for every response, reading it from `this`: no closure per request. */
function letGo(this: ServerResponse): void {
  const socket = this.req.socket as UnsafeHolder;
  if (socket[LAST_UNSAFE] === this) socket[LAST_UNSAFE] = undefined;
}

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
 * property write and a listener. A pipelined request waits for its socket if it is unsafe itself,
 * or if an unsafe request before it on the connection has not finished.
 *
 * The connection holds its unsafe response only until that response finishes: held longer (until
 * the connection's next unsafe request), every finished create kept its whole request alive
 * through the collections of young objects meanwhile, which cost a create a sixth of its CPU
 * (docs/performance.md).
 */
export function serialisingUnsafePipelines(handler: Handler): Handler {
  return function dispatch(req: IncomingMessage, res: ServerResponse): void {
    const unsafe = !SAFE_METHODS.has(req.method as string);
    const socket = req.socket as UnsafeHolder;
    if (res.socket !== null) {
      if (unsafe) holdUntilFinished(socket, res);
      handler(req, res);
      return;
    }
    const earlier = socket[LAST_UNSAFE];
    if (unsafe) holdUntilFinished(socket, res);
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
