import { Injectable, Module } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsModule } from '../metrics/metrics.module';
import { MetricsService } from '../metrics/metrics.service';
import { SecretsModule } from './secrets.module';
import { SecretsService } from './secrets.service';

/**
 * The keys as Prometheus sees them: which keys each instance holds (so an operator can see every
 * instance accept a new key before promoting it) and the values it met under a key it does not
 * hold. Apart from SecretsModule, so the command line, which has no metrics listener, seals without it.
 */
@Injectable()
export class SecretsMetrics {
  constructor(metrics: MetricsService, secrets: SecretsService) {
    const registers = [metrics.registry];
    const keys = new Gauge({
      name: 'secret_keys',
      help: 'Keys of WEBHOOK_SECRET_KEY this instance holds, by key id (the first 8 hex digits of its SHA-256) and role: sealing (the first) or opening',
      labelNames: ['key_id', 'role'],
      registers,
    });
    secrets.keyIds.forEach((id, i) => keys.set({ key_id: id, role: i === 0 ? 'sealing' : 'opening' }, 1));
    const counted = new Map<string, number>();
    new Counter({
      name: 'sealed_values_unopened_total',
      help: 'Stored values this instance could not open because their key is not in its WEBHOOK_SECRET_KEY, by key id',
      labelNames: ['key_id'],
      registers,
      collect() {
        for (const [id, count] of secrets.unopenedByKey) {
          this.inc({ key_id: id }, count - (counted.get(id) ?? 0));
          counted.set(id, count);
        }
      },
    });
  }
}

@Module({
  imports: [SecretsModule, MetricsModule],
  providers: [SecretsMetrics],
})
export class SecretsMetricsModule {}
