import { ConfigModule } from '@nestjs/config';
import { loadConfig } from './configuration';

/** Reads `.env` (if present) and the environment once, validated; global to every module. */
export const AppConfigModule = ConfigModule.forRoot({
  isGlobal: true,
  load: [() => loadConfig(process.env)],
});
