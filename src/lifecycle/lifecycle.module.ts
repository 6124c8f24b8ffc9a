import { Module } from '@nestjs/common';
import { ShutdownState } from './shutdown-state';

/** Whether this instance is going away, for the modules that answer differently when it is (readiness). */
@Module({
  providers: [ShutdownState],
  exports: [ShutdownState],
})
export class LifecycleModule {}
