import { Module } from '@nestjs/common';
import { LogOutput } from './log-output';

/** The log's stdout writer, for the logger and for what reports on it (metrics, shutdown). */
@Module({
  providers: [LogOutput],
  exports: [LogOutput],
})
export class LogOutputModule {}
