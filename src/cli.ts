#!/usr/bin/env node
import 'reflect-metadata';
import { ConsoleLogger, INestApplicationContext, LogLevel, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ParseArgsConfig, parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { ApiToken } from './auth/api-token.entity';
import { TokensModule } from './auth/tokens.module';
import { SCOPE_NAMES, Scope, isScope } from './auth/scopes';
import { TokenInputError, TokensService, tokenStatus } from './auth/tokens.service';
import { AppConfigModule } from './config/config.module';
import { ConfigValidationError } from './config/configuration';
import { parseDuration } from './config/duration';
import { DatabaseModule } from './database/database.module';
import { DATABASE_LOG_CONTEXT } from './database/database-logger';
import { migrationsApplied, pendingMigrations, runPendingMigrations } from './database/migrations-runner';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { SealedAnswers } from './idempotency/sealed-answers';
import { ResealReport, SealedStore } from './secrets/sealed-store';
import { RESEAL_BATCH, SecretsService } from './secrets/secrets.service';
import { SealedSigningSecretsModule } from './webhooks/subscriptions/sealed-secrets.module';
import { SealedPreviousSigningSecrets, SealedSigningSecrets } from './webhooks/subscriptions/sealed-secrets.service';
import { runWorker } from './worker';

/** The admin command line: same configuration, database, token service and sealing as the API. */
@Module({ imports: [AppConfigModule, DatabaseModule, TokensModule, IdempotencyModule, SealedSigningSecretsModule] })
export class CliModule {}

const MAX_BATCH = 10_000;

export const USAGE = `Usage:
  plantstore token create --user <id> [--scope <scope>]... [--expires-in <N>m|<N>h|<N>d] [--name <label>]
  plantstore token list [--user <id>]
  plantstore token revoke <token-or-id>
  plantstore secrets reseal [--batch-size <N>]
  plantstore worker
  plantstore migrate [--post-deployment]

Scopes: ${SCOPE_NAMES.join(', ')} (all of them when none is given).
secrets reseal seals again, under the first key of WEBHOOK_SECRET_KEY, what is sealed under its other
keys (webhook signing secrets, those being rotated out, stored idempotent answers), ${RESEAL_BATCH} values per batch by default
(at most ${MAX_BATCH}); safe to run while the service runs, and again.
worker delivers webhook events, and serves nothing but metrics, until SIGTERM; run it beside API
instances started with WEBHOOK_DELIVERY=false, with the same settings (docs/webhooks.md).
migrate runs the pending migrations, as every start of the service does; with --post-deployment
also the post-deployment ones, which remove what only the previous release used: run it once every
instance runs this release (docs/operations.md, "Upgrades").
The database is the one the service uses: DATABASE_URL, or the embedded SQLite file.`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export class UsageError extends Error {
  override name = 'UsageError';
}

const MAX_EXPIRY = '3650d';

/** "30d", "12h", "90m" to milliseconds; at most ten years. */
export function parseExpiresIn(text: string): number {
  const ms = parseDuration(text, { units: ['m', 'h', 'd'], min: 1, max: parseDuration(MAX_EXPIRY) });
  if (ms === undefined) {
    throw new UsageError(
      `--expires-in takes a number of minutes, hours or days, e.g. 90m, 12h, 30d (at most ${MAX_EXPIRY}); got "${text}"`,
    );
  }
  return ms;
}

export type CliCommand =
  | { kind: 'help' }
  | { kind: 'create'; subject: string; scopes: Scope[]; expiresInMs?: number; name?: string }
  | { kind: 'list'; subject?: string }
  | { kind: 'revoke'; reference: string }
  | { kind: 'reseal'; batchSize: number }
  | { kind: 'worker' }
  | { kind: 'migrate'; postDeployment: boolean };

/** The commands on tokens. */
export type TokenCommand = Exclude<CliCommand, { kind: 'help' | 'reseal' | 'worker' | 'migrate' }>;

/** Turns argv into a command, or throws UsageError with a message fit for the terminal. */
export function parseCommand(argv: string[]): CliCommand {
  const [group, action, ...rest] = argv;
  if (group === undefined || group === '--help' || group === '-h' || group === 'help') return { kind: 'help' };
  if (group === 'worker') {
    if (action !== undefined) throw new UsageError(`Unexpected argument "${action}"`);
    return { kind: 'worker' };
  }
  if (group !== 'token' && group !== 'secrets' && group !== 'migrate') {
    throw new UsageError(`Unknown command "${group}"`);
  }

  const parse = (options: ParseArgsConfig['options'], args = rest) => {
    try {
      const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
      return { values: values as Record<string, string | string[] | undefined>, positionals };
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  };

  if (group === 'migrate') {
    const { values, positionals } = parse(
      { 'post-deployment': { type: 'boolean' } },
      action === undefined ? [] : [action, ...rest],
    );
    if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
    return { kind: 'migrate', postDeployment: (values['post-deployment'] as unknown) === true };
  }

  if (group === 'secrets') {
    if (action !== 'reseal') {
      throw new UsageError(
        action === undefined ? 'secrets needs an action: reseal' : `Unknown action "secrets ${action}"`,
      );
    }
    const { values, positionals } = parse({ 'batch-size': { type: 'string' } });
    if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
    const batch = values['batch-size'];
    if (batch === undefined) return { kind: 'reseal', batchSize: RESEAL_BATCH };
    const batchSize = typeof batch === 'string' && /^[1-9]\d{0,4}$/.test(batch) ? Number(batch) : 0;
    if (batchSize < 1 || batchSize > MAX_BATCH) {
      throw new UsageError(`--batch-size takes a whole number from 1 to ${MAX_BATCH}; got "${String(batch)}"`);
    }
    return { kind: 'reseal', batchSize };
  }

  switch (action) {
    case 'create': {
      const { values, positionals } = parse({
        user: { type: 'string' },
        scope: { type: 'string', multiple: true },
        'expires-in': { type: 'string' },
        name: { type: 'string' },
      });
      if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
      if (typeof values.user !== 'string') throw new UsageError('token create needs --user <id>');
      const scopes = (values.scope ?? []) as string[];
      const unknown = scopes.find((scope) => !isScope(scope));
      if (unknown !== undefined) {
        throw new UsageError(`Unknown scope "${unknown}"; known scopes: ${SCOPE_NAMES.join(', ')}`);
      }
      const expiresIn = values['expires-in'];
      return {
        kind: 'create',
        subject: values.user,
        scopes: scopes as Scope[],
        expiresInMs: typeof expiresIn === 'string' ? parseExpiresIn(expiresIn) : undefined,
        name: typeof values.name === 'string' ? values.name : undefined,
      };
    }
    case 'list': {
      const { values, positionals } = parse({ user: { type: 'string' } });
      if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
      return { kind: 'list', subject: typeof values.user === 'string' ? values.user : undefined };
    }
    case 'revoke': {
      const { positionals } = parse({});
      if (positionals.length !== 1) throw new UsageError('token revoke takes exactly one token or token id');
      return { kind: 'revoke', reference: positionals[0] };
    }
    default:
      throw new UsageError(
        action === undefined ? 'token needs an action: create, list or revoke' : `Unknown action "token ${action}"`,
      );
  }
}

function formatTable(tokens: ApiToken[], now: Date): string[] {
  const rows = tokens.map((t) => [
    t.id,
    t.subject,
    t.name ?? '-',
    t.scopes,
    t.createdAt.toISOString(),
    t.expiresAt?.toISOString() ?? 'never',
    t.lastUsedAt?.toISOString() ?? 'never',
    tokenStatus(t, now),
  ]);
  const header = ['ID', 'USER', 'NAME', 'SCOPES', 'CREATED', 'EXPIRES', 'LAST USED', 'STATUS'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

/** One line per store: what was resealed, and what was left and why. */
function describeReseal(report: ResealReport): string {
  const left = Object.entries(report.unknownKeys).map(
    ([keyId, count]) => `${count} left under key ${keyId}, which is not in WEBHOOK_SECRET_KEY`,
  );
  if (report.changed > 0) left.push(`${report.changed} changed meanwhile`);
  if (report.unreadable > 0) left.push(`${report.unreadable} unreadable (malformed or altered)`);
  return `${report.name}: ${[`${report.resealed} resealed`, ...left].join(', ')}`;
}

/**
 * Reseals every store under the sealing key. Exit code 0 once nothing is left under another key, so
 * the others can be retired; 1 when something was left (a second run reseals what changed meanwhile).
 */
export async function reseal(
  command: Extract<CliCommand, { kind: 'reseal' }>,
  secrets: SecretsService,
  stores: SealedStore<unknown>[],
  io: CliIo,
): Promise<number> {
  if (!secrets.configured) {
    io.err('secrets reseal needs WEBHOOK_SECRET_KEY, as the service has it: the key that seals first, then the others');
    return EXIT_FAILURE;
  }
  const [sealing, ...others] = secrets.keyIds;
  io.out(`Resealing under key ${sealing}, the first of WEBHOOK_SECRET_KEY.`);
  let clean = true;
  for (const store of stores) {
    const report = await secrets.reseal(store, command.batchSize);
    io.out(describeReseal(report));
    clean &&= report.changed === 0 && report.unreadable === 0 && Object.keys(report.unknownKeys).length === 0;
  }
  if (!clean) {
    io.err('Some values were not resealed: keep the keys they need, and run the command again.');
    return EXIT_FAILURE;
  }
  io.out(
    others.length === 0
      ? 'Nothing is left sealed under another key.'
      : `Nothing is left sealed under another key: once every instance seals with ${sealing}, ` +
          `${others.join(', ')} can be removed from WEBHOOK_SECRET_KEY.`,
  );
  return EXIT_OK;
}

export async function execute(command: TokenCommand, tokens: TokensService, io: CliIo): Promise<number> {
  switch (command.kind) {
    case 'create': {
      const { secret, token } = await tokens.create(command);
      const expiry = token.expiresAt ? `expires ${token.expiresAt.toISOString()}` : 'does not expire';
      io.out(`Created token ${token.id} for user "${token.subject}" (scopes: ${token.scopes}; ${expiry}).`);
      io.out('This is the only time the token is shown; store it now:');
      io.out(secret);
      return EXIT_OK;
    }
    case 'list': {
      const list = await tokens.list(command.subject);
      if (list.length === 0) io.out('No tokens.');
      else formatTable(list, new Date()).forEach((line) => io.out(line));
      return EXIT_OK;
    }
    case 'revoke': {
      const result = await tokens.revoke(command.reference);
      if (!result) {
        io.err('No token matches that token or id.');
        return EXIT_FAILURE;
      }
      io.out(result.revokedNow ? `Revoked token ${result.token.id}.` : `Token ${result.token.id} was already revoked.`);
      return EXIT_OK;
    }
  }
}

/**
 * Opening the context ran the regular migrations, as a start of the service does; the
 * post-deployment ones run now, when asked for. Each line names a migration this command applied,
 * or says that none was pending; their progress went to stderr meanwhile (CliLogger).
 */
export async function migrate(
  command: Extract<CliCommand, { kind: 'migrate' }>,
  dataSource: DataSource,
  io: CliIo,
): Promise<number> {
  if (command.postDeployment) await runPendingMigrations(dataSource, 'post-deployment');
  const applied = migrationsApplied(dataSource);
  for (const name of applied) io.out(`applied ${name}`);
  if (applied.length === 0) io.out('No migration was pending.');
  const left = await pendingMigrations(dataSource, 'post-deployment');
  io.out(
    left.length === 0
      ? 'The schema is up to date.'
      : `Post-deployment migrations pending (run migrate --post-deployment once every instance runs this release): ${left.join(', ')}`,
  );
  return EXIT_OK;
}

/** Builds the context a command runs in; tests pass one configured by a record of their own. */
export type CliContextFactory = (command: CliCommand) => Promise<INestApplicationContext>;

/**
 * Nest's readable lines on stderr: stdout carries only what the command prints (a token, a table).
 * A wrong setting is left to the command's own last line, which names each wrong variable, without
 * Nest's report of it and its stack. Errors and warnings only, but for `migrate` the database's
 * info lines too: the migrations that start and end, and the progress of a large table's change
 * (pt-online-schema-change's lines on a Galera cluster), which can take minutes. Nest's own info
 * lines (the modules it loads) stay out.
 */
export class CliLogger extends ConsoleLogger {
  constructor(private readonly migrationLog = false) {
    super({ logLevels: migrationLog ? ['error', 'warn', 'log'] : ['error', 'warn'] });
  }

  override log(message: unknown, ...optionalParams: unknown[]): void {
    if (this.migrationLog && optionalParams[optionalParams.length - 1] === DATABASE_LOG_CONTEXT) {
      super.log(message, ...optionalParams);
    }
  }

  override error(message: unknown, ...optionalParams: unknown[]): void {
    if (message instanceof ConfigValidationError) return;
    super.error(message, ...optionalParams);
  }

  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _stream?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}

/**
 * The database is opened as the service opens it: while it cannot be reached, each failed attempt is
 * reported as it happens, for at most DB_STARTUP_TIMEOUT; then the command fails with why.
 */
const openCliContext: CliContextFactory = (command) =>
  NestFactory.createApplicationContext(CliModule, {
    logger: new CliLogger(command.kind === 'migrate'),
    abortOnError: false,
  });

/** Runs one command line; resolves to the process exit code. */
export async function runCli(
  argv: string[],
  io: CliIo,
  openContext: CliContextFactory = openCliContext,
): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCommand(argv);
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (command.kind === 'help') {
    io.out(USAGE);
    return EXIT_OK;
  }
  // A long-running process of its own, logging as the API does; not a command on the CLI's context.
  if (command.kind === 'worker') return runWorker();

  const app = await openContext(command);
  try {
    if (command.kind === 'migrate') return await migrate(command, app.get(DataSource), io);
    if (command.kind === 'reseal') {
      const stores = [
        app.get(SealedSigningSecrets),
        app.get(SealedPreviousSigningSecrets),
        app.get(SealedAnswers),
      ] as SealedStore<unknown>[];
      return await reseal(command, app.get(SecretsService), stores, io);
    }
    return await execute(command, app.get(TokensService), io);
  } catch (error) {
    if (error instanceof TokenInputError) {
      io.err(error.message);
      return EXIT_USAGE;
    }
    throw error;
  } finally {
    await app.close();
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`plantstore: ${(error as Error).message}\n`);
      process.exitCode = EXIT_FAILURE;
    },
  );
}
