import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/configuration';

/** The fields of mysql2's pool that tell its state; it has no public accessor for them. */
interface Mysql2PoolState {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
  config?: { connectionLimit?: number };
}

/**
 * Prometheus metrics, served on their own listener (METRICS_PORT), never on the API port: the API
 * may face the internet, metrics are for the operator's scraper. Each app has its own registry.
 */
@Injectable()
export class MetricsService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    collectDefaultMetrics({ register: this.registry });
    // SQLite has no pool; a gauge without labels would still report a misleading 0.
    if (config.get('database.type', { infer: true }) !== 'sqlite') this.registerPoolGauges();
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

  private registerPoolGauges(): void {
    const pool = (): Mysql2PoolState | undefined =>
      this.dataSource.isInitialized
        ? (this.dataSource.driver as unknown as { pool?: Mysql2PoolState }).pool
        : undefined;
    const registers = [this.registry];
    new Gauge({
      name: 'db_pool_connections',
      help: 'MySQL pool connections by state (in_use, idle) and the configured maximum (max)',
      labelNames: ['state'],
      registers,
      collect() {
        const state = pool();
        if (!state?._allConnections || !state._freeConnections) return;
        const open = state._allConnections.length;
        const idle = state._freeConnections.length;
        this.set({ state: 'in_use' }, open - idle);
        this.set({ state: 'idle' }, idle);
        if (state.config?.connectionLimit) this.set({ state: 'max' }, state.config.connectionLimit);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a free MySQL pool connection',
      registers,
      collect() {
        const length = pool()?._connectionQueue?.length;
        if (length !== undefined) this.set(length);
      },
    });
  }
}
