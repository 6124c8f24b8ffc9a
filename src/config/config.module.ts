import { Global, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { loadConfig } from './configuration';

/**
 * The raw variables the configuration is read from. In the service and the CLI: the process
 * environment, with `.env` in the working directory filling in what it leaves unset. Tests override
 * this provider with a record of their own, so no `.env` and no `process.env` reaches them.
 */
export const ENVIRONMENT = Symbol('ENVIRONMENT');

export async function processEnvironment(): Promise<Record<string, string | undefined>> {
  // @nestjs/config's own `.env` reading, done when the app is built rather than when this file is imported.
  await ConfigModule.forRoot();
  return process.env;
}

/** The validated configuration, read once; global to every module. */
@Global()
@Module({
  providers: [
    { provide: ENVIRONMENT, useFactory: processEnvironment },
    {
      provide: ConfigService,
      inject: [ENVIRONMENT],
      useFactory: (env: Record<string, unknown>) => new ConfigService(loadConfig(env)),
    },
  ],
  exports: [ConfigService],
})
export class AppConfigModule {}
