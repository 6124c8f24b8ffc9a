import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AppConfig } from '../config/configuration';

/**
 * Prometheus metrics, served on their own listener (METRICS_PORT), never on the API port: the API
 * may face the internet, metrics are for the operator's scraper. Each app has its own registry, on
 * which each feature declares its metrics (its `*.metrics.ts`).
 */
@Injectable()
export class MetricsService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(private readonly config: ConfigService<AppConfig, true>) {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The port metrics are served on (useful when METRICS_PORT=0 picked a free one). */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer((req, res) => {
      if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
        this.registry.metrics().then(
          (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
          () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics unavailable\n'),
        );
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found; metrics are at /metrics\n');
    });
    const host = this.config.get('host', { infer: true });
    const port = this.config.get('metrics.port', { infer: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.logger.log(`Prometheus metrics on port ${this.port} at /metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
