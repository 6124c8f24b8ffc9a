import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DeprecatedRoutes } from './deprecated-routes';

/** Finds the @Deprecated() routes; AppModule mounts their response fields (DeprecatedRoutes.apply). */
@Module({
  imports: [DiscoveryModule],
  providers: [DeprecatedRoutes],
  exports: [DeprecatedRoutes],
})
export class DeprecationModule {}
