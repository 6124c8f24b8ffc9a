import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/configuration';
import { developmentKey, developmentKeyPath, provideDevelopmentKey } from './development-key';

const folder = () => mkdtempSync(join(tmpdir(), 'plant-store-key-'));
const configOf = (env: Record<string, string>) => new ConfigService(loadConfig(env)) as ConfigService<never, true>;

describe(developmentKey.name, () => {
  it('makes a key of 32 random bytes readable by its owner only, and gives the same one after', async () => {
    const path = join(folder(), 'new', 'db.sqlite.webhook-secret-key');
    const made = await developmentKey(path);
    expect(made.created).toBe(true);
    expect(made.key).toHaveLength(32);
    expect(readFileSync(path, 'utf8')).toBe(`${made.key.toString('base64')}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await expect(developmentKey(path)).resolves.toEqual({ key: made.key, created: false });
  });

  it('makes one key when two processes start at once', async () => {
    const path = join(folder(), 'db.sqlite.webhook-secret-key');
    const [a, b] = await Promise.all([developmentKey(path), developmentKey(path)]);
    expect(a.key.equals(b.key)).toBe(true);
    expect([a.created, b.created].sort()).toEqual([false, true]);
  });

  it('refuses a file that does not hold one key, naming the file', async () => {
    const path = join(folder(), 'db.sqlite.webhook-secret-key');
    writeFileSync(path, 'not a key\n');
    await expect(developmentKey(path)).rejects.toThrow(`${path} does not hold one webhook secret key`);
  });
});

describe(provideDevelopmentKey.name, () => {
  afterEach(() => jest.restoreAllMocks());

  it('keeps one beside the embedded database in development without WEBHOOK_SECRET_KEY, and says so', async () => {
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const sqlite = join(folder(), 'plant-store.sqlite');
    const config = configOf({ NODE_ENV: 'development', SQLITE_PATH: sqlite });
    const key = await provideDevelopmentKey(config);
    expect(key).toHaveLength(32);
    expect(readFileSync(developmentKeyPath(sqlite), 'utf8').trim()).toBe(key!.toString('base64'));
    expect(log).toHaveBeenCalledWith(
      expect.stringContaining(`development key made now and kept in ${sqlite}.webhook-secret-key`),
    );
    await expect(provideDevelopmentKey(config)).resolves.toEqual(key);
    expect(String(log.mock.calls[1][0])).not.toContain('made now');
  });

  it.each([
    ['in production', { NODE_ENV: 'production' }],
    ['in tests', { NODE_ENV: 'test' }],
    ['on MySQL', { NODE_ENV: 'development', DATABASE_URL: 'mysql://u:p@127.0.0.1:3306/db' }],
    [
      'with WEBHOOK_SECRET_KEY',
      { NODE_ENV: 'development', WEBHOOK_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') },
    ],
  ])('makes none %s', async (_name, env) => {
    const sqlite = join(folder(), 'plant-store.sqlite');
    await expect(provideDevelopmentKey(configOf({ SQLITE_PATH: sqlite, ...env }))).resolves.toBeUndefined();
    expect(() => statSync(developmentKeyPath(sqlite))).toThrow();
  });
});
