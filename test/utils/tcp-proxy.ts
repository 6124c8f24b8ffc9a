import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/**
 * A loopback TCP proxy in front of the database that a test can cut and restore, to see how the
 * service behaves when its database link fails.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private silent = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<number> {
    this.server = createServer((client) => {
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      // Bytes are dropped while the link is silent, as a dead network would.
      client.on('data', (chunk: Buffer) => this.silent || upstream.write(chunk));
      upstream.on('data', (chunk: Buffer) => this.silent || client.write(chunk));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
    return this.port;
  }

  /** Drops every open connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * A silent network: connections stay open and new ones are accepted, but nothing passes either
   * way, as when packets are dropped. Only timeouts can notice.
   */
  blackhole(): void {
    this.silent = true;
  }

  /** Accepts connections again on the same port. */
  restore(): Promise<number> {
    if (this.silent) {
      // Connections that lived through the silence are out of step with the server: drop them.
      this.silent = false;
      for (const socket of this.sockets) socket.destroy();
      return Promise.resolve(this.port);
    }
    return this.start(this.port);
  }
}
