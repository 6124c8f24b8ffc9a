import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/** MySQL has no `wsrep_on` variable: the server is certainly not a Galera node. */
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/**
 * Readiness of a Galera node (docs/scaling.md): one that answers but is joining, a donor, or cut
 * off from the majority answers "WSREP has not yet prepared node for application use" (1047) to
 * writes, and its causal reads time out. It is ready only when in the primary component, synced
 * (`wsrep_local_state` 4) and `wsrep_ready`: the rule HAProxy routes by (deploy/clustercheck), so an
 * instance attached to one node directly says what HAProxy would. Whether the server is a Galera
 * node is asked once; elsewhere this adds nothing.
 */
@Injectable()
export class GaleraHealthIndicator {
  private galera?: Promise<boolean>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly indicators: HealthIndicatorService,
  ) {}

  /** Whether the database is a Galera node, so that this check applies (no, if it cannot tell within `timeoutMs`). */
  async applies(timeoutMs: number): Promise<boolean> {
    const { type } = this.dataSource.options;
    if (type !== 'mysql' && type !== 'mariadb') return false;
    this.galera ??= this.dataSource.query('SELECT @@wsrep_on AS wsrep_on').then(
      (rows: { wsrep_on: unknown }[]) => Number(rows[0]?.wsrep_on) === 1,
      (error: { errno?: unknown; driverError?: { errno?: unknown } }) => {
        // Unreachable now: ask again on the next probe.
        if ((error.driverError ?? error).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) this.galera = undefined;
        return false;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.galera,
        new Promise<boolean>((resolve) => (timer = setTimeout(resolve, timeoutMs, false))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async check(key: string): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    try {
      // Without the causal wait, which a node out of the cluster cannot satisfy.
      const rows = (await this.dataSource.query(
        "SET STATEMENT wsrep_sync_wait = 0 FOR SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_status', 'wsrep_ready', 'wsrep_local_state')",
      )) as { Variable_name: string; Value: string }[];
      const status = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
      const serving =
        status.wsrep_cluster_status === 'Primary' && status.wsrep_ready === 'ON' && status.wsrep_local_state === '4';
      return serving ? indicator.up() : indicator.down();
    } catch {
      // Unreachable is the database check's to report; this one says only what the node says of itself.
      return indicator.up();
    }
  }
}
