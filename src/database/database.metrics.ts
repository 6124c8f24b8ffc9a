import { Injectable, Module, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { MetricsModule } from '../metrics/metrics.module';
import { MetricsService } from '../metrics/metrics.service';
import { perScrape } from '../metrics/per-scrape';
import { GaleraStatus, readGaleraStatus } from './galera';
import { RetryReason, STATEMENT_RETRIES } from './statement-retry';

/** How long the probe waits for the database before calling it down: as long as readiness waits. */
export const PROBE_TIMEOUT_MS = 1000;

/** MySQL has no `wsrep_on` variable: the server is certainly not a Galera node. */
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/** The fields of mysql2's pool that tell its state; it has no public accessor for them. */
interface Mysql2PoolState {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
  config?: { connectionLimit?: number };
}

/** A Galera node's gauges, each read from its status. */
const GALERA_GAUGES: { name: string; help: string; read: (status: GaleraStatus) => number }[] = [
  {
    name: 'db_galera_cluster_primary',
    help: 'On a Galera node, 1 when it is in the primary component (the majority), else 0',
    read: (status) => (status.clusterStatus === 'Primary' ? 1 : 0),
  },
  {
    name: 'db_galera_local_state',
    help: 'On a Galera node, wsrep_local_state: 1 joining, 2 donor or desynced, 3 joined, 4 synced',
    read: (status) => status.localState,
  },
  {
    name: 'db_galera_ready',
    help: 'On a Galera node, 1 when it accepts statements (wsrep_ready), else 0',
    read: (status) => (status.ready ? 1 : 0),
  },
  {
    name: 'db_galera_cluster_size',
    help: 'On a Galera node, the nodes in its component',
    read: (status) => status.clusterSize,
  },
];

/**
 * The database as an instance sees it, API instance or worker. What is read when Prometheus scrapes
 * costs a request nothing: one `SELECT 1` through the pool (whether the database answers, and how
 * long a statement takes to come back, a wait for a pooled connection included), on MySQL the
 * pool's connections, and on a Galera node its state, labelled with the cluster's name. Retries are
 * counted as they happen, which is only after a failure. Apart from DatabaseModule, so the command
 * line, which has no metrics listener, runs without it.
 */
@Injectable()
export class DatabaseMetrics implements OnModuleDestroy {
  private readonly countRetry: (message: unknown) => void;
  /** The cluster's name when the database is a Galera node, null when it is not, undefined until known. */
  private galera?: Promise<string | null>;

  constructor(
    metrics: MetricsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    const registers = [metrics.registry];
    const probe = perScrape(() => this.probe());
    new Gauge({
      name: 'db_up',
      help: `1 when the database answered a statement within ${PROBE_TIMEOUT_MS} ms at scrape time, else 0`,
      registers,
      async collect() {
        this.set((await probe()) === undefined ? 0 : 1);
      },
    });
    new Gauge({
      name: 'db_round_trip_seconds',
      help: 'How long a statement sent at scrape time took to come back, a wait for a pooled connection included',
      registers,
      async collect() {
        this.set((await probe()) ?? Number.NaN);
      },
    });

    const retries = new Counter({
      name: 'db_statement_retries_total',
      help: 'Statements and transactions run again after a failure that left nothing applied, by reason: deadlock (or lost Galera certification), node_not_ready, connection',
      labelNames: ['reason'],
      registers,
    });
    this.countRetry = (message) => retries.inc({ reason: (message as { reason: RetryReason }).reason });
    STATEMENT_RETRIES.subscribe(this.countRetry);

    // SQLite has no pool and is no Galera node; a gauge of either would still report a misleading 0.
    if (dataSource.options.type === 'better-sqlite3') return;
    this.declarePoolGauges(registers);
    const node = perScrape(async () => {
      const cluster = await this.galeraCluster();
      return cluster === null ? undefined : { cluster, status: await readGaleraStatus(dataSource) };
    });
    for (const { name, help, read } of GALERA_GAUGES) {
      // Labelled, so that a server that is no Galera node shows no sample at all, rather than a 0.
      new Gauge({
        name,
        help,
        labelNames: ['cluster'],
        registers,
        async collect() {
          this.reset();
          const seen = await node().catch(() => undefined);
          if (seen) this.set({ cluster: seen.cluster }, read(seen.status));
        },
      });
    }
  }

  onModuleDestroy(): void {
    STATEMENT_RETRIES.unsubscribe(this.countRetry);
  }

  private declarePoolGauges(registers: Registry[]): void {
    const pool = (): Mysql2PoolState | undefined =>
      this.dataSource.isInitialized
        ? (this.dataSource.driver as unknown as { pool?: Mysql2PoolState }).pool
        : undefined;
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

  /** Seconds a `SELECT 1` took, or undefined when it failed or took longer than PROBE_TIMEOUT_MS. */
  private async probe(): Promise<number | undefined> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const answered = await Promise.race([
        this.dataSource.query('SELECT 1').then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(resolve, PROBE_TIMEOUT_MS, false))),
      ]);
      return answered ? (performance.now() - started) / 1000 : undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asked until the server answers, then known: MySQL and plain MariaDB are no Galera node. */
  private galeraCluster(): Promise<string | null> {
    this.galera ??= this.dataSource.query('SELECT @@wsrep_on AS wsrep_on, @@wsrep_cluster_name AS cluster').then(
      (rows: { wsrep_on: unknown; cluster: unknown }[]) =>
        Number(rows[0]?.wsrep_on) === 1 ? String(rows[0].cluster) : null,
      (error: { errno?: unknown; driverError?: { errno?: unknown } }) => {
        if ((error.driverError ?? error).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) this.galera = undefined;
        return null;
      },
    );
    return this.galera;
  }
}

@Module({
  imports: [MetricsModule],
  providers: [DatabaseMetrics],
})
export class DatabaseMetricsModule {}
