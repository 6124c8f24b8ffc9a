import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { galeraNodeServes, readGaleraStatus } from '../database';

/** MySQL has no `wsrep_on` variable: the server is certainly not a Galera node. */
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/**
 * Readiness of a Galera node (docs/scaling.md): one that answers but is joining, a donor, or cut
 * off from the majority answers "WSREP has not yet prepared node for application use" (1047) to
 * writes, and its causal reads time out. It is ready only when it serves by the rule HAProxy routes
 * by (`galeraNodeServes`: primary component, synced, ready), so an instance attached to one node
 * directly says what HAProxy would. Whether the server is a Galera node is asked once; elsewhere
 * this adds nothing.
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
      return galeraNodeServes(await readGaleraStatus(this.dataSource)) ? indicator.up() : indicator.down();
    } catch {
      // Unreachable is the database check's to report; this one says only what the node says of itself.
      return indicator.up();
    }
  }
}
