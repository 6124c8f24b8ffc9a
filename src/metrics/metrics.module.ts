import { Module } from '@nestjs/common';
import { LogOutputModule } from '../logging/log-output.module';
import { MetricsService } from './metrics.service';

@Module({
  imports: [LogOutputModule],
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
