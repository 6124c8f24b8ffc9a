import { INestApplicationContext } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AppConfig } from '../config/configuration';
import { TokensRepository } from './tokens.repository';
import { IssuedToken, TokensService } from './tokens.service';

export const DEVELOPMENT_SUBJECT = 'developer';

/**
 * A newcomer on a fresh machine gets a token to try the API with at once: only outside production,
 * only on the embedded database (never on a shared MySQL), and only while it holds no token at all.
 */
export async function issueFirstRunToken(app: INestApplicationContext): Promise<IssuedToken | null> {
  const config = app.get(ConfigService<AppConfig, true>);
  if (config.get('env', { infer: true }) === 'production') return null;
  if (config.get('database.type', { infer: true }) !== 'sqlite') return null;
  if ((await app.get(TokensRepository).count()) > 0) return null;
  return app.get(TokensService).create({ subject: DEVELOPMENT_SUBJECT, name: 'development token' });
}
