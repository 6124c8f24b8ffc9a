import { IncomingMessage, Server, ServerResponse, createServer, request } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * A loopback gateway that serves the service under a path prefix, as nginx's
 * `location /plant-store/ { proxy_pass http://service/; }` does: `/plant-store/x` goes to the
 * service as `/x`, and anything outside the prefix is answered 404 by the gateway itself, never
 * forwarded. Requests and answers pass through unchanged otherwise, headers included.
 */
export class PathPrefixProxy {
  private server?: Server;
  /** Paths the gateway refused, as they arrived. */
  readonly refused: string[] = [];
  port = 0;

  /**
   * `rootRelativeLinks` makes the next-page link root-relative, `</plants?...>`, as the release
   * before query-only links wrote it (an instance of it may still answer during a rollout).
   */
  constructor(
    private readonly prefix: string,
    private readonly targetPort: number,
    private readonly options: { rootRelativeLinks?: boolean } = {},
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}`;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
    return this.url;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? '';
    if (!path.startsWith(`${this.prefix}/`)) {
      this.refused.push(path);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not under the gateway prefix');
      return;
    }
    const upstream = request(
      {
        host: '127.0.0.1',
        port: this.targetPort,
        method: req.method,
        path: path.slice(this.prefix.length),
        headers: req.headers,
      },
      (answer) => {
        const link = answer.headers.link;
        if (this.options.rootRelativeLinks && typeof link === 'string' && link.startsWith('<?')) {
          answer.headers.link = `</plants${link.slice(1)}`;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
