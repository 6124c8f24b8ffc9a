import { Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { LINGER_IDLE_MS, LINGER_MAX_BYTES, LINGER_MAX_MS } from './http.limits';

export interface LingerBounds {
  maxMs: number;
  idleMs: number;
  maxBytes: number;
}

const BOUNDS: LingerBounds = { maxMs: LINGER_MAX_MS, idleMs: LINGER_IDLE_MS, maxBytes: LINGER_MAX_BYTES };

/**
 * The staged close of RFC 9112 §9.6, for a connection whose answer is written before its request's
 * body has fully arrived. Closed at once, with the client's bytes unread, the connection is reset
 * by the kernel, and a client still sending its body may lose the answer with it (EPIPE,
 * ECONNRESET). Instead, once the answer is out: the service stops writing (FIN after the answer),
 * reads and discards what the client goes on sending, and closes when the body has ended, when the
 * client closes, or at the first bound passed (LINGER_MAX_MS in all, LINGER_IDLE_MS without a
 * byte, LINGER_MAX_BYTES read), cutting the connection then.
 *
 * Returns what marks an answer for it (`linger(res)` before its head is written); only such
 * answers pay for it. A lingering connection has no request in flight: closing the server's idle
 * connections (at shutdown, and in `server.close()`) ends it too.
 */
export function lingeringClose(server: Server, bounds: LingerBounds = BOUNDS): (res: ServerResponse) => void {
  const lingering = new Set<Socket>();
  const closeIdleConnections = server.closeIdleConnections;
  server.closeIdleConnections = function (this: Server) {
    for (const socket of lingering) socket.destroy();
    closeIdleConnections.call(this);
  };

  return function linger(res: ServerResponse): void {
    res.shouldKeepAlive = false;
    // The request's: a pipelined answer may be written before it is given the connection.
    const { req } = res;
    const socket = req.socket;
    const readBefore = socket.bytesRead;
    // Read from now on and dropped, counted on the wire (chunk framing included).
    req.on('data', () => {
      if (socket.bytesRead - readBefore > bounds.maxBytes) socket.destroy();
    });
    req.resume();

    // Node ends a connection after its last answer with destroySoon(): end, then destroy.
    socket.destroySoon = function (this: Socket) {
      delete (this as Partial<Socket>).destroySoon;
      if (req.complete) {
        this.destroySoon();
        return;
      }
      this.end();
      const cut = () => this.destroy();
      const deadline = setTimeout(cut, bounds.maxMs);
      this.setTimeout(bounds.idleMs, cut);
      lingering.add(this);
      this.once('close', () => {
        clearTimeout(deadline);
        lingering.delete(this);
      });
      // The whole body read: nothing unread is left for a reset, so the connection closes cleanly.
      req.once('end', () => this.destroySoon());
    };
  };
}
