import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AppConfig } from '../config/configuration';
import { parseSecretKeys } from '../config/env/webhooks';

/** The development key, when there is one: given to SecretsService in place of WEBHOOK_SECRET_KEY. */
export const DEVELOPMENT_KEY = Symbol('DEVELOPMENT_KEY');

/** Where the development key of an embedded database is kept: beside its file, and as private. */
export function developmentKeyPath(sqlitePath: string): string {
  return `${sqlitePath}.webhook-secret-key`;
}

const isCode = (error: unknown, code: string) => (error as { code?: unknown }).code === code;

async function readKey(path: string): Promise<Buffer> {
  const key = parseSecretKeys((await readFile(path, 'utf8')).trim());
  if (key?.length !== 1) throw new Error(`${path} does not hold one webhook secret key; delete it to have one made`);
  return key[0];
}

/** The key kept at `path`, made now if there is none; whether it was made now. */
export async function developmentKey(path: string): Promise<{ key: Buffer; created: boolean }> {
  try {
    return { key: await readKey(path), created: false };
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error;
  }
  const key = randomBytes(32);
  await mkdir(dirname(path), { recursive: true });
  try {
    // 'wx': of two processes starting at once, one writes and the other reads what it wrote.
    await writeFile(path, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    return { key, created: true };
  } catch (error) {
    if (!isCode(error, 'EEXIST')) throw error;
    return { key: await readKey(path), created: false };
  }
}

/**
 * A newcomer on a fresh machine can try webhooks at once, as the development token lets them try
 * the API: in development only (never in production or tests), on the embedded database only (a
 * shared MySQL serves instances that must share one operator's key), and while WEBHOOK_SECRET_KEY
 * is unset. The key is kept beside the database file, so what it sealed opens after a restart.
 */
export async function provideDevelopmentKey(config: ConfigService<AppConfig, true>): Promise<Buffer | undefined> {
  if (config.get('env', { infer: true }) !== 'development') return undefined;
  const database = config.get('database', { infer: true });
  if (database.type !== 'sqlite' || config.get('secrets', { infer: true }).keys.length > 0) return undefined;
  const path = developmentKeyPath(database.path);
  let kept: { key: Buffer; created: boolean };
  try {
    kept = await developmentKey(path);
  } catch (error) {
    throw new Error(`Could not keep a development WEBHOOK_SECRET_KEY in ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  new Logger('Secrets').log(
    `WEBHOOK_SECRET_KEY is unset: webhooks use the development key ${kept.created ? 'made now and ' : ''}kept in ` +
      `${path} (development on the embedded database only; production needs WEBHOOK_SECRET_KEY)`,
  );
  return kept.key;
}
