import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppModule } from '../src/app.module';
import { APP_OPTIONS, buildOpenApiDocument, createHttpAdapter } from '../src/app.setup';

/** Regenerates the committed openapi.json from the code (`npm run openapi`). */
async function main(): Promise<void> {
  // The document comes from decorators only; a throwaway in-memory database lets the app boot.
  Object.assign(process.env, { DATABASE_URL: '', SQLITE_PATH: ':memory:', NODE_ENV: 'test' });
  const app = await NestFactory.create(AppModule.forRoot(), createHttpAdapter(), { ...APP_OPTIONS, logger: ['error'] });
  const document = buildOpenApiDocument(app);
  await app.close();
  const target = join(__dirname, '..', 'openapi.json');
  writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write(`Wrote ${target}\n`);
}

void main();
