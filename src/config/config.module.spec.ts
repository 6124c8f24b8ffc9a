import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppConfig } from './configuration';
import { AppConfigModule, ENVIRONMENT } from './config.module';

describe(AppConfigModule.name, () => {
  const configOf = async (override?: Record<string, string>) => {
    const builder = Test.createTestingModule({ imports: [AppConfigModule] });
    if (override) builder.overrideProvider(ENVIRONMENT).useValue(override);
    const moduleRef = await builder.compile();
    return moduleRef.get(ConfigService<AppConfig, true>);
  };

  it('reads the environment it is given, and only that', async () => {
    const config = await configOf({ PLANTS_MAX_PAGE: '7', NODE_ENV: 'test' });
    expect(config.get('plants.maxPage', { infer: true })).toBe(7);
    expect(config.get('env', { infer: true })).toBe('test');
    expect(config.get('port', { infer: true })).toBe(3000);
  });

  describe('in the service and the CLI', () => {
    const cwd = process.cwd();
    const saved = { ...process.env };
    let dir: string;

    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'plant-store-config-'));
      writeFileSync(join(dir, '.env'), 'PLANTS_MAX_PAGE=9\nTOKEN_CACHE_TTL_MS=1234\n');
      process.chdir(dir);
    });
    afterEach(() => {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
      // This is the one place the production path runs: it fills process.env from .env. Undo it.
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    });

    it('reads the process environment, with .env in the working directory filling in what it leaves unset', async () => {
      process.env.TOKEN_CACHE_TTL_MS = '4321';
      const config = await configOf();
      expect(config.get('plants.maxPage', { infer: true })).toBe(9);
      expect(config.get('auth.tokenCacheTtlMs', { infer: true })).toBe(4321);
    });
  });
});
